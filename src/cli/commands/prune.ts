/**
 * `invocache prune`: drop entries from a store (older than a duration) or a
 * cassette (older than a duration, or listed as unused by a test run).
 */
import { parseMaxAge } from "../../cassette/index.js";
import { MetadataMissingError } from "../../errors.js";
import { isIdentityPrefix, shortId } from "../../identity/index.js";
import { isEntryKey, type MetaQuery, valueDigest } from "../../store/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { type Align, plural, renderTable, shortTime, tableLine, visibleWidth } from "../format.js";
import { readText } from "../input.js";
import type { Io } from "../io.js";
import { OutputBuffer } from "../output-buffer.js";
import { progress } from "../progress.js";
import {
  type EntryRecord,
  metaProblem,
  openSource,
  SOURCE_OPTIONS,
  type SourceProblem,
} from "../source.js";
import { warnProblems } from "./ls.js";
import { notServedWindow } from "./prune-not-served.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  "older-than": { type: "string" },
  unused: { type: "string" },
  "not-served-since": { type: "string" },
  "dry-run": { type: "boolean", short: "n" },
} as const;

/**
 * @example
 * // invocache prune --older-than 30d --dry-run
 */
export const pruneCommand: Command = {
  name: "prune",
  help: `Usage: invocache prune --older-than DURATION [--store URL | --cassette PATH] [--namespace NS] [--dry-run] [--json]
       invocache prune --not-served-since DURATION [--store URL | --cassette PATH] [--namespace NS] [--dry-run] [--json]
       invocache prune --cassette PATH --unused LIST [--dry-run] [--json]

Remove recorded entries. Run records and values that are not entries stay.

  --older-than DURATION   entries recorded longer ago than DURATION: 90d, 12h, 30m, 45s,
                          2w, 500ms (a store or a cassette)
  --unused LIST           a cassette's entries named in LIST (a file, or - for stdin): one
                          store key (default:e:<id>:<n>) or id prefix (8+ hex) per line, as
                          the "not used" report of invocache/vitest prints them ("  - key")
  --not-served-since DURATION
                          entries no run served (replayed or recorded) in that window, by
                          the run records of runs with an explicit runId; an entry recorded
                          within the window is kept, and so is every entry of a namespace
                          with no run record in it (a store or a cassette)
Several can be given: an entry is removed when it matches any.

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them (each rewritten once,
                     atomically, under its lock)
  --namespace NS     only this namespace
  -n, --dry-run      list what would be removed; change nothing
  --json             {"source", "dryRun", "removed": [{"key", "id", "recordedAt"}], "kept"}
  -h, --help         this help

Examples:
  invocache prune --older-than 30d --dry-run
  invocache prune --older-than 12h --store redis://127.0.0.1:6379 --namespace ci
  invocache prune --not-served-since 30d --store postgres://ci@db/cache --dry-run
  npx vitest run 2> report.txt; grep -- '  - ' report.txt | invocache prune --cassette cassettes/x.yaml --unused -
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("prune", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const olderThan = values["older-than"];
    const notServedSince = values["not-served-since"];
    if (olderThan === undefined && values.unused === undefined && notServedSince === undefined) {
      throw new UsageError(
        "prune: say what to remove with --older-than DURATION (e.g. 30d), --not-served-since DURATION or, for a cassette, --unused LIST; see `invocache prune --help`",
      );
    }
    const window =
      notServedSince === undefined
        ? undefined
        : await notServedWindow(values, io, notServedSince, Date.now());
    if (values.unused !== undefined && values.cassette === undefined) {
      throw new UsageError(
        "prune: --unused applies to a cassette (--cassette PATH); a store keeps no usage, prune it with --older-than",
      );
    }
    let maxAgeMs: number | undefined;
    if (olderThan !== undefined) {
      try {
        maxAgeMs = parseMaxAge(olderThan);
      } catch {
        throw new UsageError(
          `--older-than must be a duration such as 30d, 12h, 45s; got ${JSON.stringify(olderThan)}`,
        );
      }
    }
    const unused =
      values.unused === undefined ? undefined : parseUnused(await readText(values.unused, io));
    const source = openSource(values, io, { write: values["dry-run"] !== true });
    try {
      const now = Date.now();
      const dryRun = values["dry-run"] === true;
      const report = new RemovedPrinter(io, source.url, dryRun, values.json === true);
      // The first problem and a count: prune reports no more than that.
      const problems: SourceProblem[] = [];
      let problemCount = 0;
      let seen = 0;
      let removedCount = 0;
      // A store is pruned as it is scanned, in batches of BATCH keys: memory
      // holds one batch, whatever the store's size. Every scan of a store
      // backend pages on (or snapshots) its keys, so deleting keys already
      // read never makes the scan skip or repeat one. A cassette is read
      // whole anyway and rewritten once per file: its doomed entries are
      // gathered and removed at the end.
      const inBatches = source.kind === "store";
      let batch: Doomed[] = [];
      const flush = async () => {
        const doomed = batch;
        batch = [];
        if (doomed.length === 0) return;
        let removed = doomed;
        if (!dryRun) {
          const steps = inBatches ? 0 : new Set(doomed.map((r) => r.cassette)).size;
          const bar = inBatches ? undefined : progress(io, "pruning", steps);
          try {
            await pruneSeams.beforeDelete?.(doomed.map((r) => r.key));
            const keys = new Set(
              await source.remove(doomed, () => bar?.tick(), { before: removedCount }),
            );
            removed = doomed.filter((r) => keys.has(r.key));
          } finally {
            bar?.done();
          }
        }
        removedCount += removed.length;
        for (const r of removed) await report.add(r);
      };
      // A dry run on a store answers from its stored metadata when it keeps
      // it: the same predicate on every entry, no value read. (A real prune
      // reads each doomed value: it deletes only if unchanged, by digest.)
      const metaRows =
        dryRun && inBatches && unused === undefined && maxAgeMs !== undefined
          ? source.metaRows?.()
          : undefined;
      if (metaRows !== undefined) {
        const bar = progress(io, `reading ${source.url}`);
        let answered = true;
        try {
          // On the SQL stores the counts come from the store's sums and
          // only the entries recorded near or before the cutoff are listed
          // (narrowed in the database, by recordedAt as text): no row of the
          // rest crosses to this process. They are the stores that list in
          // key order; elsewhere (Redis) the narrowed listing would still
          // read every row, after a pass for the sums: one pass instead.
          const summed = source.listsInKeyOrder ? await source.metaStats?.() : undefined;
          let rows = metaRows;
          if (summed !== undefined) {
            seen = summed.groups.reduce((n, g) => n + g.entries, 0);
            problemCount = summed.problems;
            if (summed.firstProblem !== undefined) {
              const { key, problem } = summed.firstProblem;
              problems.push(metaProblem(source.url, { key, kind: "problem", bytes: 0, problem }));
            }
            rows = source.metaRows!(entriesBefore(now - maxAgeMs!)) ?? metaRows;
          }
          for await (const m of rows) {
            bar.tick();
            if (summed === undefined && m.kind === "problem") {
              if (problemCount++ === 0) problems.push(metaProblem(source.url, m));
              continue;
            }
            if (m.kind !== "entry") continue;
            if (summed === undefined) seen++;
            if (now - Date.parse(m.recordedAt!) <= maxAgeMs!) continue;
            batch.push({
              key: m.key,
              digest: "",
              id: m.id!,
              occurrence: m.occurrence!,
              namespace: m.namespace!,
              role: m.role!,
              recordedAt: m.recordedAt!,
            });
            if (batch.length >= BATCH) await flush();
          }
          await flush();
        } catch (error) {
          // Thrown before the first row: nothing reported yet.
          if (!(error instanceof MetadataMissingError)) throw error;
          io.err(
            `${io.errStyle.yellow("invocache: warning:")} ${error.message} Reading every value instead.\n`,
          );
          answered = false;
        } finally {
          bar.done();
        }
        if (answered) {
          if (!values.json) warnProblems(io, problems, problemCount);
          await report.end(seen - removedCount);
          return EXIT.ok;
        }
      }
      const bar = progress(io, `${dryRun || !inBatches ? "reading" : "pruning"} ${source.url}`);
      try {
        await source.scan(
          {
            entry: async (r) => {
              seen++;
              const old =
                maxAgeMs !== undefined && now - Date.parse(r.entry.meta.recordedAt) > maxAgeMs;
              if (!old && unused?.(r) !== true && window?.drops(r) !== true) return;
              batch.push(doomedOf(r, dryRun));
              if (inBatches && batch.length >= BATCH) await flush();
            },
            problem: (p) => {
              if (problemCount++ === 0) problems.push(p);
            },
          },
          () => bar.tick(),
        );
        if (inBatches) await flush();
      } finally {
        bar.done();
      }
      if (!inBatches) {
        batch.sort(byRecordedAt);
        await flush();
      }
      if (!values.json) warnProblems(io, problems, problemCount);
      if (!values.json) window?.warn();
      await report.end(seen - removedCount);
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};

/**
 * Internal seam, for tests: awaited with each batch's keys after the scan
 * read them and before they are deleted, the window in which another
 * process may re-record one of them. Not a public name (the CLI's modules
 * are not exported).
 */
export const pruneSeams: { beforeDelete?: (keys: readonly string[]) => Promise<void> } = {};

/**
 * The listing of the entries that may be recorded before `cutoffMs`
 * (epoch ms): those whose recordedAt, as text, sorts before the cutoff
 * two days on. A recordedAt is ISO-8601 with an offset under a day
 * (envelope.ts), so its text is never more than a day past its instant;
 * the exact test (`Date.parse`) stays the caller's.
 */
export function entriesBefore(cutoffMs: number): MetaQuery {
  const bound = cutoffMs + 2 * 86_400_000;
  // Past the dates JavaScript can write: every entry may be older.
  if (!(Math.abs(bound) <= 8.64e15)) return { entriesOnly: true };
  return { recordedBefore: new Date(bound).toISOString() };
}

/** Keys deleted per batch while a store is scanned. */
const BATCH = 256;

/** Rows held before the report streams: a report this short prints as one table, by time. */
const TABLE_ROWS = 1000;

function byRecordedAt(a: Doomed, b: Doomed): number {
  if (a.recordedAt !== b.recordedAt) return a.recordedAt < b.recordedAt ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * The removed entries, reported as they go. Up to {@link TABLE_ROWS} are
 * held and, when that is all, printed by recording time as one aligned
 * table (or `--json` array). Past that, rows stream in scan order: the
 * table with the widths of the first rows held, `--json` as the same
 * document `JSON.stringify` would print.
 */
class RemovedPrinter {
  readonly #io: Io;
  readonly #url: string;
  readonly #dryRun: boolean;
  readonly #json: boolean;
  readonly #out: OutputBuffer;
  #held: Doomed[] | undefined = [];
  #widths: number[] = [];
  #count = 0;

  constructor(io: Io, url: string, dryRun: boolean, json: boolean) {
    this.#io = io;
    this.#url = url;
    this.#dryRun = dryRun;
    this.#json = json;
    this.#out = new OutputBuffer(io);
  }

  async add(r: Doomed): Promise<void> {
    this.#count++;
    if (this.#held !== undefined) {
      this.#held.push(r);
      if (this.#held.length <= TABLE_ROWS) return;
      const held = this.#held;
      this.#held = undefined;
      if (this.#json) {
        await this.#out.write(
          `{\n  "source": ${JSON.stringify(this.#url)},\n  "dryRun": ${this.#dryRun},\n  "removed": [`,
        );
        for (const [i, h] of held.entries())
          await this.#out.write(`${i === 0 ? "" : ","}${jsonRow(h)}`);
        return;
      }
      const cells = held.map((h) => this.#cells(h));
      this.#widths = HEADER.map((h, i) =>
        Math.max(visibleWidth(h), ...cells.map((c) => visibleWidth(c[i] ?? ""))),
      );
      await this.#out.write(`${this.#io.style.dim(tableLine(HEADER, this.#widths, ALIGN))}\n`);
      for (const c of cells) await this.#out.write(`${tableLine(c, this.#widths, ALIGN)}\n`);
      return;
    }
    await this.#out.write(
      this.#json ? `,${jsonRow(r)}` : `${tableLine(this.#cells(r), this.#widths, ALIGN)}\n`,
    );
  }

  async end(kept: number): Promise<void> {
    const io = this.#io;
    const held = this.#held;
    if (held !== undefined) held.sort(byRecordedAt);
    if (this.#json) {
      if (held !== undefined) {
        printJson(io, {
          source: this.#url,
          dryRun: this.#dryRun,
          removed: held.map((r) => ({ key: r.key, id: r.id, recordedAt: r.recordedAt })),
          kept,
        });
      } else {
        await this.#out.write(`\n  ],\n  "kept": ${kept}\n}\n`);
      }
      await this.#out.end();
      return;
    }
    await this.#out.end();
    const s = io.style;
    if (this.#count === 0) {
      io.out(`Nothing to prune in ${this.#url} (${plural(kept, "entry", "entries")} kept).\n`);
      return;
    }
    if (held !== undefined) {
      io.out(
        renderTable(
          HEADER,
          held.map((r) => this.#cells(r)),
          { headerStyle: s.dim, align: ALIGN },
        ),
      );
    }
    const dryRun = this.#dryRun;
    io.out(
      `${dryRun ? s.yellow("Would remove") : "Removed"} ${plural(this.#count, "entry", "entries")} from ${this.#url}; ${kept} kept.${dryRun ? " (dry run: nothing changed)" : ""}\n`,
    );
  }

  #cells(r: Doomed): string[] {
    return [
      this.#io.style.cyan(shortId(r.id)),
      String(r.occurrence),
      r.namespace,
      r.role,
      shortTime(r.recordedAt),
    ];
  }
}

const HEADER = ["id", "occ", "namespace", "role", "recorded"];
const ALIGN: Align[] = ["left", "right"];

/** One element of `--json`'s `removed`, as `JSON.stringify(…, null, 2)` indents it there. */
function jsonRow(r: Doomed): string {
  const row = { key: r.key, id: r.id, recordedAt: r.recordedAt };
  return `\n    ${JSON.stringify(row, null, 2).replaceAll("\n", "\n    ")}`;
}

/** What prune keeps of an entry it will remove (not the entry: a store may hold millions). */
interface Doomed {
  key: string;
  id: string;
  occurrence: number;
  namespace: string;
  role: string;
  recordedAt: string;
  cassette?: string;
  /** `valueDigest` of the value scanned: removed only if still that value (empty in a dry run). */
  digest: string;
}

function doomedOf(r: EntryRecord, dryRun: boolean): Doomed {
  return {
    key: r.key,
    digest: dryRun ? "" : valueDigest(r.value),
    id: r.id,
    occurrence: r.occurrence,
    namespace: r.namespace,
    role: r.entry.manifest.role,
    recordedAt: r.entry.meta.recordedAt,
    ...(r.cassette === undefined ? {} : { cassette: r.cassette }),
  };
}

/** A predicate over entries from an unused-entries list (keys or id prefixes, one per line). */
function parseUnused(text: string): (r: EntryRecord) => boolean {
  const keys = new Set<string>();
  const prefixes: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim().replace(/^-\s+/, "");
    if (line === "" || line.startsWith("#")) return;
    if (isEntryKey(line)) keys.add(line);
    else if (isIdentityPrefix(line)) prefixes.push(line.toLowerCase());
    else {
      throw new UsageError(
        `--unused line ${i + 1}: ${JSON.stringify(line.slice(0, 80))} is neither an entry key (ns:e:<id>:<n>) nor an id prefix`,
      );
    }
  });
  return (r) => keys.has(r.key) || prefixes.some((p) => r.id.startsWith(p));
}
