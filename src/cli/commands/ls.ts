/**
 * `invocache ls`: the entries of a store or a cassette, one row each.
 */
import { MetadataMissingError } from "../../errors.js";
import { shortId } from "../../identity/index.js";
import type { StoredMeta } from "../../store/index.js";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { EXIT } from "../errors.js";
import {
  formatBytes,
  formatMs,
  oneLine,
  plural,
  renderTable,
  shortTime,
  tableLine,
  visibleWidth,
} from "../format.js";
import type { Io } from "../io.js";
import { metaModelLabel, modelLabel } from "../manifest-label.js";
import { OutputBuffer } from "../output-buffer.js";
import { progress } from "../progress.js";
import {
  type EntryRecord,
  type EntrySource,
  metaProblem,
  openSource,
  type ScanTotals,
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
 * The row of an entry from its stored metadata (`Store.listMeta`): the same
 * fields as `entryRow`, without reading the entry.
 *
 * @example
 * metaEntryRow(meta).model // "gpt-4o"
 */
export function metaEntryRow(m: StoredMeta): EntryRow {
  return {
    key: m.key,
    namespace: m.namespace!,
    id: m.id!,
    shortId: shortId(m.id!),
    occurrence: m.occurrence!,
    role: m.role!,
    model: metaModelLabel(m),
    task: m.task!,
    attempt: m.attempt!,
    verdict: m.verdict ?? null,
    recordedAt: m.recordedAt!,
    durationMs: m.durationMs!,
    bytes: m.bytes,
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
 * Tell stderr about entries that could not be read: how many (`count`, by
 * default all of `problems`) and the first.
 *
 * @example
 * warnProblems(io, contents.problems);
 */
export function warnProblems(
  io: Io,
  problems: readonly SourceProblem[],
  count = problems.length,
): void {
  if (count === 0 || problems[0] === undefined) return;
  io.err(
    `${io.errStyle.yellow("invocache: warning:")} skipped ${plural(count, "malformed entry", "malformed entries")}; first: ${problems[0].message}\n`,
  );
}

/** Problems `ls --json` lists; past these it says how many it left out (`problemsOmitted`). */
const JSON_PROBLEMS = 1000;

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
                     "bytes", "cassette"?}], "problems": [{"key", "message"}] (the first 1,000;
                     "problemsOmitted": how many more, when there are)}
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
      // the entry (prompt, response). A store that sorts by time itself
      // (SQLite, PostgreSQL) hands the rows over in order and they are
      // printed as they come: memory does not grow with the store. Other
      // sources are sorted here, holding every row (about 1.5 KB each).
      const list = new RowPrinter(io, source, values);
      const held: EntryRow[] = [];
      // Problems are counted; only the first are kept (a store of corrupt
      // entries would otherwise be held whole, one problem per entry).
      const problems: SourceProblem[] = [];
      let problemCount = 0;
      const keep = values.json ? JSON_PROBLEMS : 1;
      // Unless the database refuses the sort when asked (onUnordered below).
      let ordered = source.sortsByRecordedAt;
      const bar = progress(io, `reading ${source.url}`);
      let totals: ScanTotals;
      // From the stored metadata when the store keeps it: in time order from
      // an index, the first rows at once, no value read.
      const fromMeta = await lsFromMeta(source, io, values, list, problems, keep, () => bar.tick());
      if (fromMeta !== undefined) {
        bar.done();
        await list.end(problems, fromMeta, undefined);
        return EXIT.ok;
      }
      try {
        totals = await source.scan(
          {
            entry: (record) => {
              const r = entryRow(record);
              if (values.role !== undefined && r.role !== values.role) return;
              if (values.model !== undefined && r.model !== values.model) return;
              if (ordered) return list.add(r);
              held.push(r);
            },
            problem: (p) => {
              if (problemCount++ < keep) problems.push(p);
            },
          },
          () => bar.tick(),
          {
            order: "recordedAt",
            onUnordered: () => {
              ordered = false;
            },
          },
        );
      } finally {
        bar.done();
      }
      if (!totals.ordered) {
        held.sort(byRecordedAt);
        for (const r of held.splice(0)) await list.add(r);
      }
      await list.end(problems, problemCount, totals.files);
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};

/**
 * `ls` from the source's stored metadata, in time order: resolves how many
 * problems it met, or undefined (nothing printed) when the source has no
 * metadata to answer from (a cassette) or is not migrated (said on stderr
 * with the command that fixes it; the caller reads the values as before).
 */
async function lsFromMeta(
  source: EntrySource,
  io: Io,
  values: { role?: string | undefined; model?: string | undefined },
  list: RowPrinter,
  problems: SourceProblem[],
  keep: number,
  tick: () => void,
): Promise<number | undefined> {
  const rows = source.metaRows?.({ order: "recordedAt" });
  if (rows === undefined) return undefined;
  let problemCount = 0;
  try {
    for await (const m of rows) {
      tick();
      if (m.kind === "problem") {
        if (problemCount++ < keep) {
          problems.push(metaProblem(source.url, m));
        }
        continue;
      }
      const r = metaEntryRow(m);
      if (values.role !== undefined && r.role !== values.role) continue;
      if (values.model !== undefined && r.model !== values.model) continue;
      await list.add(r);
    }
  } catch (error) {
    // Thrown before the first row (the store checks first): nothing printed yet.
    if (!(error instanceof MetadataMissingError)) throw error;
    io.err(
      `${io.errStyle.yellow("invocache: warning:")} ${error.message} Reading every value instead.\n`,
    );
    return undefined;
  }
  return problemCount;
}

/** Recording time, then key, both compared by code unit (as SQLite's BINARY order). */
function byRecordedAt(a: EntryRow, b: EntryRow): number {
  if (a.recordedAt !== b.recordedAt) return a.recordedAt < b.recordedAt ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Rows held before `ls` starts streaming: a listing this short prints as one aligned table. */
const TABLE_ROWS = 1000;

/**
 * Prints `ls` rows as they come. Up to {@link TABLE_ROWS} rows are held and,
 * when the listing ends there, printed exactly as one aligned table. A longer
 * listing streams: the column widths are those of the first rows held (a
 * wider cell later pushes its own row), the namespace column is there unless
 * `--namespace` was given, and the last line counts entries and namespaces
 * (not distinct ids, which would mean holding every id). `--json` streams
 * the same document `JSON.stringify` would print.
 */
class RowPrinter {
  readonly #io: Io;
  readonly #source: EntrySource;
  readonly #json: boolean;
  readonly #namespace: string | undefined;
  readonly #out: OutputBuffer;
  #held: EntryRow[] | undefined = [];
  #count = 0;
  readonly #namespaces = new Set<string>();
  #widths: number[] = [];
  #withNs = false;

  constructor(io: Io, source: EntrySource, values: { json?: boolean; namespace?: string }) {
    this.#io = io;
    this.#source = source;
    this.#json = values.json === true;
    this.#namespace = values.namespace;
    this.#out = new OutputBuffer(io);
  }

  async add(r: EntryRow): Promise<void> {
    this.#count++;
    this.#namespaces.add(r.namespace);
    if (this.#json) {
      const first = this.#count === 1;
      const head = first
        ? `{\n  "source": ${JSON.stringify(this.#source.url)},\n  "entries": [\n`
        : ",\n";
      await this.#out.write(`${head}    ${JSON.stringify(r, null, 2).replaceAll("\n", "\n    ")}`);
      return;
    }
    if (this.#held !== undefined) {
      this.#held.push(r);
      if (this.#held.length <= TABLE_ROWS) return;
      // Too long for one table: print what is held with fixed widths, then stream.
      const held = this.#held;
      this.#held = undefined;
      this.#withNs = this.#namespace === undefined;
      const header = this.#header();
      const cells = held.map((h) => this.#cells(h));
      this.#widths = header.map((h, i) =>
        Math.max(visibleWidth(h), ...cells.map((c) => visibleWidth(c[i] ?? ""))),
      );
      await this.#out.write(`${this.#io.style.dim(this.#line(header))}\n`);
      for (const c of cells) await this.#out.write(`${this.#line(c)}\n`);
      return;
    }
    await this.#out.write(`${this.#line(this.#cells(r))}\n`);
  }

  async end(
    problems: readonly SourceProblem[],
    problemCount: number,
    files: number | undefined,
  ): Promise<void> {
    const io = this.#io;
    const source = this.#source;
    if (this.#json) {
      const omitted = problemCount - problems.length;
      const tail = omitted > 0 ? { problems, problemsOmitted: omitted } : { problems };
      const tailJson = JSON.stringify(tail, null, 2).slice(1, -2);
      await this.#out.write(
        this.#count === 0
          ? `${JSON.stringify({ source: source.url, entries: [], ...tail }, null, 2)}\n`
          : `\n  ],${tailJson}\n}\n`,
      );
      await this.#out.end();
      return;
    }
    await this.#out.end();
    warnProblems(io, problems, problemCount);
    if (!source.exists) {
      io.out(`Nothing recorded yet: ${source.url} does not exist.\n`);
      return;
    }
    // A folder says how many cassettes it held: "no entries" in zero files is a wrong path.
    const where = files === undefined ? source.url : `${source.url} (${plural(files, "cassette")})`;
    if (this.#count === 0) {
      io.out(`No entries in ${where}${this.#namespace ? `, namespace ${this.#namespace}` : ""}.\n`);
      return;
    }
    const s = io.style;
    const namespaces = this.#namespaces;
    if (this.#held === undefined) {
      io.out(
        s.dim(
          `${plural(this.#count, "entry", "entries")} (${namespaces.size > 1 ? plural(namespaces.size, "namespace") : `in namespace ${[...namespaces][0]}`}) in ${where}\n`,
        ),
      );
      return;
    }
    const rows = this.#held;
    this.#withNs = namespaces.size > 1;
    const header = this.#header();
    io.out(
      renderTable(
        header,
        rows.map((r) => this.#cells(r)),
        { align: header.map((h) => (RIGHT.has(h) ? "right" : "left")), headerStyle: s.dim },
      ),
    );
    const ids = new Set(rows.map((r) => r.id)).size;
    io.out(
      s.dim(
        `${plural(rows.length, "entry", "entries")} (${plural(ids, "id")}${this.#withNs ? `, ${plural(namespaces.size, "namespace")}` : ` in namespace ${[...namespaces][0]}`}) in ${where}\n`,
      ),
    );
  }

  #header(): string[] {
    return [
      ...(this.#source.folder ? ["cassette"] : []),
      "id",
      "occ",
      ...(this.#withNs ? ["namespace"] : []),
      "role",
      "model",
      "attempt",
      "verdict",
      "recorded",
      "took",
      "size",
    ];
  }

  #cells(r: EntryRow): string[] {
    const s = this.#io.style;
    return [
      ...(this.#source.folder ? [oneLine(r.cassette ?? "", 40)] : []),
      s.cyan(r.shortId),
      String(r.occurrence),
      ...(this.#withNs ? [r.namespace] : []),
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
    ];
  }

  #line(cells: readonly string[]): string {
    const header = this.#header();
    return tableLine(
      cells,
      this.#widths,
      header.map((h) => (RIGHT.has(h) ? "right" : "left")),
    );
  }
}

const RIGHT = new Set(["occ", "attempt", "took", "size"]);
