/**
 * `invocache stats`: what a store or a cassette holds, in numbers.
 */

import { MetadataMissingError } from "../../errors.js";
import { callKind } from "../../identity/internal.js";
import type { StoredMeta } from "../../store/index.js";
import {
  costOf,
  extractUsage,
  formatSpend,
  PRICE_SNAPSHOT,
  type PriceSnapshot,
  type Spend,
  type Usage,
} from "../../usage/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT } from "../errors.js";
import { formatBytes, formatMs, plural, renderTable, shortTime } from "../format.js";
import type { Io } from "../io.js";
import { metaModelLabel, modelLabel } from "../manifest-label.js";
import { progress } from "../progress.js";
import {
  type EntryRecord,
  metaProblem,
  openSource,
  type ScanTotals,
  SOURCE_OPTIONS,
  type SourceProblem,
} from "../source.js";
import { warnProblems } from "./ls.js";

/** Counts for one group of entries. */
export interface GroupStats {
  entries: number;
  bytes: number;
  /** Sum of the live calls' durations: what replaying them all saves, ms. */
  recordedMs: number;
  /**
   * Tokens and dollars the recordings cost (what replaying them all saves):
   * entries with no usage in a known shape count in `noUsage`, those whose
   * model has no known price in `unpriced`.
   */
  recorded: Spend;
}

/** The `--json` shape of `invocache stats` (docs/cli.md). */
export interface StatsReport extends GroupStats {
  source: string;
  ids: number;
  runs: number;
  oldest: string | null;
  newest: string | null;
  verdicts: { accepted: number; rejected: number; none: number };
  byNamespace: Record<string, GroupStats>;
  byRole: Record<string, GroupStats>;
  byModel: Record<string, GroupStats>;
  problems: number;
  /** The price table the dollars come from. */
  prices: PriceSnapshot;
}

/**
 * The numbers of a list of entries.
 *
 * @example
 * computeStats("sqlite:///app/.invocache/cache.sqlite", entries, 0, 0).byRole.planner?.entries
 */
export function computeStats(
  source: string,
  entries: readonly EntryRecord[],
  runs: number,
  problems: number,
): StatsReport {
  const fold = new StatsFold(source, false);
  for (const r of entries) fold.add(r);
  return fold.report(runs, problems);
}

const group = (): GroupStats => ({
  entries: 0,
  bytes: 0,
  recordedMs: 0,
  recorded: { inputTokens: 0, outputTokens: 0, usd: 0, unpriced: 0, noUsage: 0 },
});

function groupOf(groups: Record<string, GroupStats>, name: string): GroupStats {
  groups[name] ??= group();
  return groups[name];
}

/**
 * Distinct ids, counted per namespace (one id recorded in two namespaces is
 * two recordings). From a store that lists in key order (SQLite, Postgres:
 * `Store.listsInKeyOrder`) every occurrence of an id comes right after the
 * one before, since a key is `${namespace}:e:${id}:${occurrence}` and a
 * namespace holds no ":", so comparing with the last one counts them in
 * constant memory; from any other source a set of them is kept.
 */
class DistinctIds {
  readonly #seen: Set<string> | undefined;
  #last = "";
  #count = 0;

  constructor(keyOrdered: boolean) {
    this.#seen = keyOrdered ? undefined : new Set();
  }

  add(namespace: string, id: string): void {
    const pair = `${namespace}:${id}`;
    if (this.#seen !== undefined) {
      this.#seen.add(pair);
      return;
    }
    if (pair !== this.#last) this.#count++;
    this.#last = pair;
  }

  get size(): number {
    return this.#seen?.size ?? this.#count;
  }
}

/** What the stats of one entry are made of, from its value or its stored metadata. */
interface StatsItem {
  namespace: string;
  id: string;
  bytes: number;
  durationMs: number;
  usage: Usage | undefined;
  /** The manifest's model (prices), undefined for a tool call. */
  model: string | undefined;
  /** The "model" column (modelLabel). */
  label: string;
  role: string;
  recordedAt: string;
  verdict: "accepted" | "rejected" | undefined;
}

/**
 * The stats of entries seen one at a time (`source.scan`): nothing of an
 * entry is kept (ids only where the source is not in key order, see
 * DistinctIds), so a store of a million entries is summed in the memory of
 * a few groups.
 */
class StatsFold {
  readonly #report: StatsReport;
  readonly #ids: DistinctIds;

  constructor(source: string, keyOrdered: boolean) {
    this.#ids = new DistinctIds(keyOrdered);
    this.#report = {
      source,
      ...group(),
      ids: 0,
      runs: 0,
      oldest: null,
      newest: null,
      verdicts: { accepted: 0, rejected: 0, none: 0 },
      byNamespace: {},
      byRole: {},
      byModel: {},
      problems: 0,
      prices: { ...PRICE_SNAPSHOT },
    };
  }

  add(r: EntryRecord): void {
    this.addItem({
      namespace: r.namespace,
      id: r.id,
      bytes: r.bytes,
      durationMs: r.entry.meta.durationMs,
      // Stored with the entry; read from the response for recordings made before usage was.
      usage: r.entry.meta.usage ?? extractUsage(r.entry.response),
      model: callKind(r.entry.manifest).model(r.entry.manifest),
      label: modelLabel(r.entry.manifest),
      role: r.entry.manifest.role,
      recordedAt: r.entry.meta.recordedAt,
      verdict: r.entry.meta.verdict?.verdict,
    });
  }

  /** An entry from its stored metadata (`Store.listMeta`): the same sums, no value read. */
  addMeta(m: StoredMeta): void {
    this.addItem({
      namespace: m.namespace!,
      id: m.id!,
      bytes: m.bytes,
      durationMs: m.durationMs!,
      usage: m.usage,
      model: m.model,
      label: metaModelLabel(m),
      role: m.role!,
      recordedAt: m.recordedAt!,
      verdict: m.verdict,
    });
  }

  addItem(r: StatsItem): void {
    const report = this.#report;
    this.#ids.add(r.namespace, r.id);
    const usage = r.usage;
    const cost = usage === undefined ? undefined : costOf(r.model, usage);
    const into = (g: GroupStats) => {
      g.entries++;
      g.bytes += r.bytes;
      g.recordedMs += r.durationMs;
      if (usage === undefined) {
        g.recorded.noUsage++;
        return;
      }
      g.recorded.inputTokens += usage.inputTokens;
      g.recorded.outputTokens += usage.outputTokens;
      if (cost === undefined) g.recorded.unpriced++;
      else g.recorded.usd = Math.round((g.recorded.usd + cost.usd) * 1e9) / 1e9;
    };
    into(report);
    const at = r.recordedAt;
    if (report.oldest === null || at < report.oldest) report.oldest = at;
    if (report.newest === null || at > report.newest) report.newest = at;
    report.verdicts[r.verdict ?? "none"]++;
    into(groupOf(report.byNamespace, r.namespace));
    into(groupOf(report.byRole, r.role));
    into(groupOf(report.byModel, r.label));
  }

  report(runs: number, problems: number): StatsReport {
    const report = this.#report;
    report.ids = this.#ids.size;
    report.runs = runs;
    report.problems = problems;
    report.recordedMs = Math.round(report.recordedMs * 1000) / 1000;
    return report;
  }
}

/**
 * @example
 * // invocache stats --json
 */
export const statsCommand: Command = {
  name: "stats",
  help: `Usage: invocache stats [--store URL | --cassette PATH] [--namespace NS] [--json]

Entries, distinct ids, run records, bytes, recorded call time, tokens and
dollars (what replaying everything saves; prices from the bundled
@pydantic/genai-prices table, its date shown), verdicts, oldest and newest
recording; then the same by namespace, role and model.

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them, instead of a store
  --namespace NS     only this namespace
  --json             {"source", "entries", "bytes", "recordedMs", "recorded", "ids", "runs",
                     "oldest", "newest", "verdicts", "byNamespace", "byRole", "byModel",
                     "problems", "prices"}
  -h, --help         this help

Examples:
  invocache stats
  invocache stats --cassette cassettes/test/planner.yaml
  invocache stats --json | jq .byModel
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("stats", argv, SOURCE_OPTIONS, {
      min: 0,
      max: 0,
      names: "",
    });
    const source = openSource(values, io);
    try {
      const fast = await statsFromMeta(source, io);
      if (fast !== undefined) {
        if (values.json) {
          printJson(io, fast.report);
          return EXIT.ok;
        }
        warnProblems(io, fast.problems, fast.report.problems);
        printHuman(io, fast.report, source.exists);
        return EXIT.ok;
      }
      // One entry at a time: nothing but the sums and the distinct ids is kept.
      const fold = new StatsFold(source.url, source.listsInKeyOrder);
      const problems: SourceProblem[] = [];
      const bar = progress(io, `reading ${source.url}`);
      let totals: ScanTotals;
      try {
        totals = await source.scan(
          {
            entry: (r) => fold.add(r),
            // The first one is shown; the rest are only counted.
            problem: (p) => {
              if (problems.length === 0) problems.push(p);
              else problems.length++;
            },
          },
          () => bar.tick(),
        );
      } finally {
        bar.done();
      }
      const report = fold.report(totals.runs, problems.length);
      if (values.json) {
        printJson(io, report);
        return EXIT.ok;
      }
      warnProblems(io, problems);
      printHuman(io, report, source.exists);
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};

/**
 * The stats from the store's stored metadata (`Store.listMeta`), reading no
 * value: undefined when the source has none to answer from (a cassette),
 * or the store is not migrated (said on stderr, with the command that fixes
 * it; the caller then reads the values as before).
 */
async function statsFromMeta(
  source: ReturnType<typeof openSource>,
  io: Io,
): Promise<{ report: StatsReport; problems: SourceProblem[] } | undefined> {
  const rows = source.metaRows?.();
  if (rows === undefined) return undefined;
  // listMeta's default order is the key order: distinct ids in constant memory.
  const fold = new StatsFold(source.url, true);
  const problems: SourceProblem[] = [];
  let runs = 0;
  let count = 0;
  const bar = progress(io, `reading ${source.url}`);
  try {
    for await (const m of rows) {
      bar.tick();
      if (m.kind === "entry") fold.addMeta(m);
      else if (m.kind === "run") runs++;
      else if (m.kind === "problem") {
        count++;
        if (problems.length === 0) {
          problems.push(metaProblem(source.url, m));
        }
      }
    }
  } catch (error) {
    if (!(error instanceof MetadataMissingError)) throw error;
    io.err(
      `${io.errStyle.yellow("invocache: warning:")} ${error.message} Reading every value instead.\n`,
    );
    return undefined;
  } finally {
    bar.done();
  }
  return { report: fold.report(runs, count), problems };
}

function printHuman(io: Io, r: StatsReport, exists: boolean): void {
  const s = io.style;
  io.out(`${s.bold(r.source)}${exists ? "" : s.dim(" (does not exist yet)")}\n`);
  const line = (name: string, value: string) => io.out(`  ${s.dim(name.padEnd(13))} ${value}\n`);
  line("entries", `${r.entries} (${plural(r.ids, "id")}, ${plural(r.runs, "run record")})`);
  line("size", formatBytes(r.bytes));
  line("recorded time", `${formatMs(r.recordedMs)} of live calls (what a full replay saves)`);
  line(
    "recorded cost",
    `${formatSpend(r.recorded)}${r.recorded.noUsage > 0 && r.recorded.noUsage < r.entries ? `, ${plural(r.recorded.noUsage, "entry", "entries")} without usage` : ""} · prices ${r.prices.source}@${r.prices.version} (${r.prices.date})`,
  );
  line(
    "verdicts",
    `${r.verdicts.accepted} accepted, ${r.verdicts.rejected} rejected, ${r.verdicts.none} without`,
  );
  if (r.oldest !== null && r.newest !== null) {
    line("recorded", `${shortTime(r.oldest)} … ${shortTime(r.newest)}`);
  }
  for (const [title, groups] of [
    ["namespace", r.byNamespace],
    ["role", r.byRole],
    ["model", r.byModel],
  ] as const) {
    const names = Object.keys(groups).sort();
    if (names.length === 0) continue;
    io.out("\n");
    io.out(
      renderTable(
        [title, "entries", "size", "recorded time", "recorded cost"],
        names.map((n) => {
          const g = groups[n]!;
          return [
            n === "" ? s.dim("(none)") : n,
            String(g.entries),
            formatBytes(g.bytes),
            formatMs(g.recordedMs),
            formatSpend(g.recorded),
          ];
        }),
        { indent: "  ", headerStyle: s.dim, align: ["left", "right", "right", "right", "left"] },
      ),
    );
  }
}
