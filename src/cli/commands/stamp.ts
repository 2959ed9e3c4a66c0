/**
 * `invocache stamp <artifact> --id <prefix>`: stamp an artifact with a
 * recorded invocation, after the fact.
 */
import { resolve } from "node:path";
import { shortId } from "../../identity/index.js";
import { readSigningKey, type SigningKey, stampArtifact } from "../../provenance/index.js";
import { integerOption, parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { resolveEntries } from "../resolve.js";
import { openSource, SOURCE_OPTIONS } from "../source.js";
import { readAll } from "./ls.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  id: { type: "string" },
  occurrence: { type: "string" },
  replayed: { type: "boolean" },
  key: { type: "string" },
} as const;

/**
 * @example
 * // invocache stamp out/plan.md --id 3f2a9c0d
 */
export const stampCommand: Command = {
  name: "stamp",
  help: `Usage: invocache stamp <artifact> --id <prefix> [--occurrence N] [--store URL | --cassette FILE] [--namespace NS] [--replayed] [--key FILE] [--json]

Append a provenance stamp (an in-toto Statement v1 with a SLSA Provenance v1
predicate, docs/provenance.md) to <artifact>.intoto.jsonl, tying the artifact
to the recorded invocation <prefix> names: its manifest, the digest of its
recorded response, its recording metadata. With --key, the line is a DSSE
envelope holding that statement, signed with the key (Ed25519 or ECDSA
P-256, from \`invocache keygen\`); without, an unsigned Statement.

Options:
  --id PREFIX        the entry's id prefix (8+ hex, unique)          (required)
  --occurrence N     which occurrence, when the id has several
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette FILE    a YAML cassette instead of a store
  --namespace NS     which namespace, when the id is in several
  --replayed         mark the stamp as made from a replayed output (metadata.invocache_replayed)
  --key FILE         sign with this PEM private key (the .key.pem of \`invocache keygen\`)
  --json             {"artifact", "stampPath", "id", "shortId", "namespace", "occurrence",
                     "signed", "keyid"}
  -h, --help         this help

Examples:
  invocache stamp out/plan.md --id 3f2a9c0d
  invocache stamp out/patch.diff --id 9b1c44e0 --cassette cassettes/test/builder.yaml
  invocache stamp out/plan.md --id 3f2a9c0d && invocache verify out/plan.md
  invocache stamp out/plan.md --id 3f2a9c0d --key .invocache/keys/invocache-signing.key.pem
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("stamp", argv, OPTIONS, {
      min: 1,
      max: 1,
      names: "<artifact>",
    });
    if (values.id === undefined) {
      throw new UsageError(
        "stamp: missing --id <prefix> (the recorded invocation that produced the artifact; find it with `invocache ls`)",
      );
    }
    const occurrence =
      values.occurrence === undefined ? undefined : integerOption("occurrence", values.occurrence);
    const artifact = positionals[0]!;
    if (artifact === "") {
      throw new UsageError("stamp: <artifact> must be a file path, got an empty string");
    }
    if (values.key === "")
      throw new UsageError("stamp: --key must be a file path, got an empty string");
    // Read the key before the store: a wrong key file is reported before anything is opened.
    let key: SigningKey | undefined;
    if (values.key !== undefined) key = await readSigningKey(resolve(io.cwd, values.key));
    const source = openSource(values, io);
    try {
      const { entries } = await readAll(source, io);
      const { id, records: all } = resolveEntries(values.id, entries, source);
      const records = all.filter((r) => occurrence === undefined || r.occurrence === occurrence);
      const where = (r: (typeof all)[number]) => `${r.namespace} occurrence ${r.occurrence}`;
      if (records.length === 0) {
        throw new CliError(
          "ERR_NOT_FOUND",
          `${shortId(id)} has no occurrence ${occurrence}; recorded: ${all.map(where).join(", ")}`,
        );
      }
      if (records.length > 1) {
        throw new UsageError(
          `stamp: ${shortId(id)} has ${records.length} recordings (${records.map(where).join("; ")}); choose one with --occurrence N and/or --namespace NS`,
        );
      }
      const r = records[0]!;
      const stampPath = await stampArtifact(artifact, {
        id,
        manifest: r.entry.manifest,
        entry: r.entry,
        occurrence: r.occurrence,
        replayed: values.replayed === true,
        key,
      });
      if (values.json) {
        printJson(io, {
          artifact,
          stampPath,
          id,
          shortId: shortId(id),
          namespace: r.namespace,
          occurrence: r.occurrence,
          signed: key !== undefined,
          keyid: key?.keyid ?? null,
        });
      } else {
        io.out(
          `Stamped ${artifact} with ${io.style.cyan(shortId(id))} (${r.entry.manifest.role}, attempt ${r.entry.manifest.attempt}, occurrence ${r.occurrence}) → ${stampPath}${key === undefined ? " (unsigned)" : `, signed by keyid ${key.keyid.slice(0, 12)}`}\n`,
        );
      }
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};
