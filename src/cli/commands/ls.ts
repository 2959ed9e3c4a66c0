/**
 * `invocache ls`: the entries of a store or a cassette, one row each.
 */
import { shortId } from "../../identity/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT } from "../errors.js";
import { formatBytes, formatMs, oneLine, plural, renderTable, shortTime } from "../format.js";
import type { Io } from "../io.js";
import { modelLabel } from "../manifest-label.js";
import { progress } from "../progress.js";
import {
  type EntryRecord,
  type EntrySource,
  openSource,
  SOURCE_OPTIONS,
  type SourceContents,
  type SourceProblem,
} from "../source.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  role: { type: "string" },
  model: { type: "string" },
} as const;

/** The `--json` form of one entry row (docs/cli.md). */
export interface EntryRow {
  key: string;
  namespace: string;
  id: string;
  shortId: string;
  occurrence: number;
  role: string;
  model: string;
  task: string;
  attempt: number;
  verdict: "accepted" | "rejected" | null;
  recordedAt: string;
  durationMs: number;
  bytes: number;
  /** With `--cassette <folder>`: the cassette file, relative to the folder. */
  cassette?: string;
}

/**
 * The row of an entry, as `ls --json` prints it.
 *
 * @example
 * entryRow(record).shortId // "3f2a9c0d1b7e"
 */
export function entryRow(r: EntryRecord): EntryRow {
  const { manifest, meta } = r.entry;
  return {
    key: r.key,
    namespace: r.namespace,
    id: r.id,
    shortId: shortId(r.id),
    occurrence: r.occurrence,
    role: manifest.role,
    model: modelLabel(manifest),
    task: manifest.task,
    attempt: manifest.attempt,
    verdict: meta.verdict?.verdict ?? null,
    recordedAt: meta.recordedAt,
    durationMs: meta.durationMs,
    bytes: r.bytes,
    ...(r.cassette === undefined ? {} : { cassette: r.cassette }),
  };
}

/**
 * Read a source with a progress counter (large stores), sorted by recording time.
 *
 * @example
 * const { entries } = await readAll(source, io);
 */
export async function readAll(source: EntrySource, io: Io): Promise<SourceContents> {
  const bar = progress(io, `reading ${source.url}`);
  try {
    const contents = await source.read(() => bar.tick());
    contents.entries.sort(
      (a, b) =>
        a.entry.meta.recordedAt.localeCompare(b.entry.meta.recordedAt) ||
        a.key.localeCompare(b.key),
    );
    return contents;
  } finally {
    bar.done();
  }
}

/**
 * Tell stderr about entries that could not be read.
 *
 * @example
 * warnProblems(io, contents.problems);
 */
export function warnProblems(io: Io, problems: readonly SourceProblem[]): void {
  if (problems.length === 0) return;
  io.err(
    `${io.errStyle.yellow("invocache: warning:")} skipped ${plural(problems.length, "malformed entry", "malformed entries")}; first: ${problems[0]!.message}\n`,
  );
}

/**
 * @example
 * // invocache ls --namespace demo
 */
export const lsCommand: Command = {
  name: "ls",
  help: `Usage: invocache ls [--store URL | --cassette PATH] [--namespace NS] [--role ROLE] [--model MODEL] [--json]

List recorded entries, oldest first: short id, occurrence, role, model,
attempt, verdict, when recorded, how long the live call took, size.

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite under the
                     working directory); also memory://, redis://…, postgres://…
  --cassette PATH    a YAML cassette, or a folder of them (every .yaml/.yml under it),
                     instead of a store
  --namespace NS     only this namespace (default: all)
  --role ROLE        only entries of this role
  --model MODEL      only entries of this model
  --json             {"source", "entries": [{"key", "namespace", "id", "shortId", "occurrence",
                     "role", "model", "task", "attempt", "verdict", "recordedAt", "durationMs",
                     "bytes", "cassette"?}], "problems": [{"key", "message"}]}
  -h, --help         this help

Examples:
  invocache ls
  invocache ls --namespace demo --role builder
  invocache ls --cassette cassettes/test/planner.yaml
  invocache ls --cassette cassettes/
  invocache ls --store redis://127.0.0.1:6379 --json | jq -r '.entries[].shortId'
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("ls", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const source = openSource(values, io);
    try {
      // One entry at a time, keeping only its row (a few short fields), never
      // the entry (prompt, response): a store of a million entries lists in
      // the memory of its rows. Sorted by recording time afterwards.
      const rows: EntryRow[] = [];
      const problems: SourceProblem[] = [];
      const bar = progress(io, `reading ${source.url}`);
      let totals: Awaited<ReturnType<EntrySource["scan"]>>;
      try {
        totals = await source.scan(
          {
            entry: (record) => {
              const r = entryRow(record);
              if (values.role !== undefined && r.role !== values.role) return;
              if (values.model !== undefined && r.model !== values.model) return;
              rows.push(r);
            },
            problem: (p) => problems.push(p),
          },
          () => bar.tick(),
        );
      } finally {
        bar.done();
      }
      rows.sort((a, b) => a.recordedAt.localeCompare(b.recordedAt) || a.key.localeCompare(b.key));
      const contents = { problems, files: totals.files };
      if (values.json) {
        printJson(io, { source: source.url, entries: rows, problems: contents.problems });
        return EXIT.ok;
      }
      warnProblems(io, contents.problems);
      if (!source.exists) {
        io.out(`Nothing recorded yet: ${source.url} does not exist.\n`);
        return EXIT.ok;
      }
      // A folder says how many cassettes it held: "no entries" in zero files is a wrong path.
      const where =
        contents.files === undefined
          ? source.url
          : `${source.url} (${plural(contents.files, "cassette")})`;
      if (rows.length === 0) {
        io.out(
          `No entries in ${where}${values.namespace ? `, namespace ${values.namespace}` : ""}.\n`,
        );
        return EXIT.ok;
      }
      const s = io.style;
      const namespaces = new Set(rows.map((r) => r.namespace));
      const withNs = namespaces.size > 1;
      const withFile = source.folder;
      const header = [
        ...(withFile ? ["cassette"] : []),
        "id",
        "occ",
        ...(withNs ? ["namespace"] : []),
        "role",
        "model",
        "attempt",
        "verdict",
        "recorded",
        "took",
        "size",
      ];
      const table = rows.map((r) => [
        ...(withFile ? [oneLine(r.cassette ?? "", 40)] : []),
        s.cyan(r.shortId),
        String(r.occurrence),
        ...(withNs ? [r.namespace] : []),
        oneLine(r.role, 20),
        oneLine(r.model === "" ? "-" : r.model, 24),
        String(r.attempt),
        r.verdict === null
          ? s.dim("-")
          : r.verdict === "accepted"
            ? s.green(r.verdict)
            : s.red(r.verdict),
        shortTime(r.recordedAt),
        formatMs(r.durationMs),
        formatBytes(r.bytes),
      ]);
      const right = new Set(["occ", "attempt", "took", "size"]);
      io.out(
        renderTable(header, table, {
          align: header.map((h) => (right.has(h) ? "right" : "left")),
          headerStyle: s.dim,
        }),
      );
      const ids = new Set(rows.map((r) => r.id)).size;
      io.out(
        s.dim(
          `${plural(rows.length, "entry", "entries")} (${plural(ids, "id")}${withNs ? `, ${plural(namespaces.size, "namespace")}` : ` in namespace ${[...namespaces][0]}`}) in ${where}\n`,
        ),
      );
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};
