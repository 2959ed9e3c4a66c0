/**
 * Every command, in the order `invocache --help` lists them. Modules are
 * imported only when their command runs.
 */
import type { CommandEntry } from "../command.js";

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "demo",
    summary:
      "record and replay a small agent pipeline against a simulated model (no network, no key)",
    load: async () => (await import("./demo.js")).demoCommand,
  },
  {
    name: "id",
    summary: "identity and short id of a request; --manifest prints the exact pre-image",
    load: async () => (await import("./id.js")).idCommand,
  },
  {
    name: "normalize",
    summary: "normalize a prompt; --explain shows which rules fired where",
    load: async () => (await import("./normalize.js")).normalizeCommand,
  },
  {
    name: "explain",
    summary: "why two requests/entries do or do not share an identity, field by field",
    load: async () => (await import("./explain.js")).explainCommand,
  },
  {
    name: "diff",
    summary:
      "where two stored runs diverge: the first differing step, why, and the steps side by side",
    load: async () => (await import("./diff.js")).diffCommand,
  },
  {
    name: "ls",
    summary: "list the entries of a store or a cassette",
    load: async () => (await import("./ls.js")).lsCommand,
  },
  {
    name: "show",
    summary: "one entry by unique id prefix: manifest, metadata, verdict, response",
    load: async () => (await import("./show.js")).showCommand,
  },
  {
    name: "rm",
    summary: "drop one entry by unique id prefix (--dry-run to see what would go)",
    load: async () => (await import("./rm.js")).rmCommand,
  },
  {
    name: "stats",
    summary: "counts and sizes of a store or cassette, by namespace, role and model",
    load: async () => (await import("./stats.js")).statsCommand,
  },
  {
    name: "prune",
    summary: "drop a store's entries older than --older-than, or a cassette's unused ones",
    load: async () => (await import("./prune.js")).pruneCommand,
  },
  {
    name: "import",
    summary:
      "import VCR/vcrpy, Polly.js HAR, nock.back and aimock recordings into a store or cassette",
    load: async () => (await import("./import.js")).importCommand,
  },
  {
    name: "rekey",
    summary: "change recorded manifests (--set/--unset) and move entries to their new identities",
    load: async () => (await import("./rekey.js")).rekeyCommand,
  },
  {
    name: "migrate-store",
    summary: "give a store made by an older invocache the metadata ls, stats and prune answer from",
    load: async () => (await import("./migrate-store.js")).migrateStoreCommand,
  },
  {
    name: "redact",
    summary: "replace secrets in cassettes by {secret:NAME} placeholders",
    load: async () => (await import("./redact.js")).redactCommand,
  },
  {
    name: "keygen",
    summary: "make a key pair (Ed25519 or ECDSA P-256 PEM) to sign stamps with",
    load: async () => (await import("./keygen.js")).keygenCommand,
  },
  {
    name: "stamp",
    summary: "stamp an artifact with a recorded invocation (in-toto/SLSA, <artifact>.intoto.jsonl)",
    load: async () => (await import("./stamp.js")).stampCommand,
  },
  {
    name: "verify",
    summary: "verify artifacts against their stamps (exit 1 when one fails)",
    load: async () => (await import("./verify.js")).verifyCommand,
  },
  {
    name: "proxy",
    summary: "a record/replay HTTP endpoint any language's SDK points its base URL at",
    load: async () => (await import("./proxy.js")).proxyCommand,
  },
  {
    name: "completion",
    summary: "print a shell completion script: bash, zsh or fish",
    load: async () => (await import("./completion.js")).completionCommandFor(COMMANDS),
  },
  {
    name: "view",
    summary: "a local web viewer of runs, entries, diffs and misses; --export one HTML file",
    load: async () => (await import("./view.js")).viewCommand,
  },
];
