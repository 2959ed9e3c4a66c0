/**
 * `invocache explain <a> <b>`: why two invocations do or do not share an
 * identity, field by field. Each side is a request, manifest or entry file,
 * or the id prefix of a recorded entry.
 */
import { existsSync } from "node:fs";
import type { ManifestField } from "../../identity/index.js";
import {
  canonicalJson,
  explainIdentity,
  type FieldDiff,
  type Manifest,
  shortId,
} from "../../identity/index.js";
import { explainNormalization } from "../../normalize/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { oneLine, renderTable } from "../format.js";
import { label, readDocument } from "../input.js";
import { invocationFromDocument, type LoadedInvocation } from "../invocation.js";
import type { Io } from "../io.js";
import { looksLikePrefix, resolveEntries } from "../resolve.js";
import { type EntrySource, openSource, SOURCE_OPTIONS, type SourceContents } from "../source.js";
import { readAll } from "./ls.js";

const OPTIONS = { ...SOURCE_OPTIONS, "exit-code": { type: "boolean" } } as const;
// Reading order of the manifest fields (every field of MANIFEST_FIELDS).
const FIELDS: readonly ManifestField[] = [
  "role",
  "model",
  "attempt",
  "task",
  "params",
  "inputs",
  "prompt",
];

/**
 * @example
 * // invocache explain before.json after.json
 */
export const explainCommand: Command = {
  name: "explain",
  help: `Usage: invocache explain <a> <b> [--store URL | --cassette PATH] [--namespace NS] [--exit-code] [--json]

Compare two invocations field by field (role, model, attempt, task, params,
inputs, prompt) after normalization, and say why they do or do not share an
identity. Each of <a> and <b> is:
  a request, manifest or entry file (JSON or YAML; - for stdin, once), or
  an id prefix (8+ hex) of an entry in the store or cassette

Options:
  --store URL        store to resolve id prefixes in (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    resolve id prefixes in this cassette (or folder of them) instead
  --namespace NS     only entries of this namespace
  --exit-code        exit 1 when the identities differ (like git diff --exit-code)
  --json             {"same", "a", "b", "fields", "diffs"} (see docs/cli.md)
  -h, --help         this help

Examples:
  invocache explain request.json request-retry.json
  invocache explain 3f2a9c0d 9b1c44e0
  invocache explain request.json 3f2a9c0d --cassette cassettes/planner.yaml
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("explain", argv, OPTIONS, {
      min: 2,
      max: 2,
      names: "<a> <b> (two files or id prefixes)",
    });
    if (positionals[0] === "-" && positionals[1] === "-") {
      throw new UsageError("explain: only one side can be - (stdin)");
    }
    let source: EntrySource | undefined;
    let contents: SourceContents | undefined;
    const load = async (arg: string): Promise<LoadedInvocation> => {
      if (arg === "-" || existsSync(arg)) {
        return invocationFromDocument(await readDocument(arg, io), label(arg));
      }
      if (!looksLikePrefix(arg)) {
        throw new UsageError(
          `explain: ${JSON.stringify(arg)} is neither a file nor an id prefix (8 to 64 hex characters)`,
        );
      }
      source ??= openSource(values, io);
      contents ??= await readAll(source, io);
      const { records } = resolveEntries(arg, contents.entries, source);
      const r = records[0]!;
      return invocationFromDocument(
        r.entry,
        `${r.namespace}:e:${shortId(r.id)}…:${r.occurrence} in ${source.url}`,
      );
    };
    try {
      const a = await load(positionals[0]!);
      const b = await load(positionals[1]!);
      const diffs = explainIdentity(a.manifest, b.manifest);
      const same = a.id === b.id;
      if (values.json) {
        printJson(io, {
          same,
          a: side(a),
          b: side(b),
          fields: FIELDS.map((f) => ({
            field: f,
            same: fieldText(a.manifest, f) === fieldText(b.manifest, f),
            a: fieldValue(a.manifest, f) ?? null,
            b: fieldValue(b.manifest, f) ?? null,
          })),
          diffs,
        });
      } else {
        printHuman(io, a, b, diffs, same);
      }
      return same || !values["exit-code"] ? EXIT.ok : EXIT.failed;
    } finally {
      await (source as EntrySource | undefined)?.close();
    }
  },
};

function side(inv: LoadedInvocation) {
  return {
    label: inv.label,
    kind: inv.kind,
    id: inv.id,
    shortId: shortId(inv.id),
    manifest: inv.manifest,
    normalization: normalization(inv) ?? null,
  };
}

/** Which rules fired on the raw prompt and task of a request. */
function normalization(inv: LoadedInvocation): Record<string, number> | undefined {
  if (inv.request === undefined) return undefined;
  const counts: Record<string, number> = {};
  for (const text of [inv.request.prompt, inv.request.task]) {
    if (text === "") continue;
    for (const [rule, n] of Object.entries(
      explainNormalization(text, inv.request.normalize).counts,
    )) {
      counts[rule] = (counts[rule] ?? 0) + n;
    }
  }
  return counts;
}

/** A model manifest field of a manifest of any kind (a tool manifest has no model, prompt or params). */
function fieldValue(m: Manifest, f: ManifestField): unknown {
  return (m as Partial<Record<ManifestField, unknown>>)[f];
}

function fieldText(m: Manifest, f: (typeof FIELDS)[number]): string {
  const v = fieldValue(m, f);
  if (v === undefined) return "";
  return typeof v === "string" ? v : canonicalJson(v as never);
}

function show(m: Manifest, f: (typeof FIELDS)[number]): string {
  const v = fieldValue(m, f);
  if (v === undefined) return "(none)";
  if (f === "inputs") {
    const list = v as string[];
    return list.length === 0 ? "(none)" : list.map((h) => h.slice(0, 19)).join(", ");
  }
  if (v === "") return "(empty)";
  return oneLine(typeof v === "string" ? v : canonicalJson(v as never), 34);
}

function printHuman(
  io: Io,
  a: LoadedInvocation,
  b: LoadedInvocation,
  diffs: FieldDiff[],
  same: boolean,
): void {
  const s = io.style;
  io.out(`a  ${shortId(a.id)}  ${a.kind} ${a.label}\n`);
  io.out(`b  ${shortId(b.id)}  ${b.kind} ${b.label}\n\n`);
  io.out(
    same
      ? `${s.green("Same identity")}: every manifest field is equal after normalization.\n`
      : `${s.yellow("Different identities")}: ${diffs.length} field${diffs.length === 1 ? "" : "s"} differ${diffs.length === 1 ? "s" : ""}.\n`,
  );
  io.out("\n");
  io.out(
    renderTable(
      ["field", "a", "b", ""],
      FIELDS.map((f) => {
        const eq = fieldText(a.manifest, f) === fieldText(b.manifest, f);
        return [
          f,
          show(a.manifest, f),
          show(b.manifest, f),
          eq ? s.dim("same") : s.yellow("differs"),
        ];
      }),
      { indent: "  ", headerStyle: s.dim },
    ),
  );
  if (diffs.length > 0) {
    io.out("\n");
    for (const d of diffs) {
      io.out(`  ${d.summary}\n`);
      if (d.diff !== undefined) {
        for (const line of d.diff.split("\n")) io.out(`      ${line}\n`);
      }
    }
  }
  const na = normalization(a);
  const nb = normalization(b);
  if (na !== undefined || nb !== undefined) {
    const fmt = (c: Record<string, number> | undefined) =>
      c === undefined
        ? "(not a request)"
        : Object.keys(c).length === 0
          ? "no rule fired"
          : Object.entries(c)
              .map(([r, n]) => `${r} ×${n}`)
              .join(", ");
    io.out(`\nNormalization of the prompt and task: a: ${fmt(na)}; b: ${fmt(nb)}\n`);
    if (same && a.request !== undefined && b.request !== undefined) {
      const raw = a.request.prompt !== b.request.prompt || a.request.task !== b.request.task;
      if (raw) io.out(s.dim("The raw texts differ only in what these rules replaced.\n"));
    }
  }
}
