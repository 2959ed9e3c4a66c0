/**
 * `invocache stats`: what a store or a cassette holds, in numbers.
 */

import { MetadataMissingError } from "../../errors.js";
import { callKind } from "../../identity/internal.js";
import {
  durationUs,
  type MetaStats,
  type MetaStatsKey,
  type MetaStatsTokens,
  statsKeyId,
  summedUsage,
} from "../../store/index.js";
import {
  costOf,
  extractUsage,
  formatSpend,
  PRICE_SNAPSHOT,
  type PriceSnapshot,
  type Spend,
  type Usage,
  unitPrices,
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

/** A group's sums while folding: integers (µs, nanodollars), so every way of summing agrees. */
interface Sums {
  entries: number;
  bytes: number;
  durationUs: number;
  inputTokens: number;
  outputTokens: number;
  nanoUsd: number;
  unpriced: number;
  noUsage: number;
}

const sums = (): Sums => ({
  entries: 0,
  bytes: 0,
  durationUs: 0,
  inputTokens: 0,
  outputTokens: 0,
  nanoUsd: 0,
  unpriced: 0,
  noUsage: 0,
});

function addSums(into: Sums, s: Sums): void {
  into.entries += s.entries;
  into.bytes += s.bytes;
  into.durationUs += s.durationUs;
  into.inputTokens += s.inputTokens;
  into.outputTokens += s.outputTokens;
  into.nanoUsd += s.nanoUsd;
  into.unpriced += s.unpriced;
  into.noUsage += s.noUsage;
}

function groupStats(s: Sums): GroupStats {
  return {
    entries: s.entries,
    bytes: s.bytes,
    recordedMs: s.durationUs / 1000,
    recorded: {
      inputTokens: s.inputTokens,
      outputTokens: s.outputTokens,
      usd: s.nanoUsd / 1e9,
      unpriced: s.unpriced,
      noUsage: s.noUsage,
    },
  };
}

/** A cost in whole nanodollars: each entry's cost is rounded once, then summed exactly. */
function nanoUsd(model: string | undefined, usage: Usage): number | undefined {
  const cost = costOf(model, usage);
  return cost === undefined ? undefined : Math.round(cost.usd * 1e9);
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

/**
 * The stats of entries seen one at a time (`source.scan`), or of a store's
 * sums (`Store.statsMeta`): nothing of an entry is kept (ids only where the
 * source is not in key order, see DistinctIds), so a store of a million
 * entries is summed in the memory of a few groups.
 */
class StatsFold {
  readonly #source: string;
  readonly #ids: DistinctIds;
  #idCount = 0;
  readonly #total = sums();
  readonly #groups = {
    byNamespace: new Map<string, Sums>(),
    byRole: new Map<string, Sums>(),
    byModel: new Map<string, Sums>(),
  };
  readonly #verdicts = { accepted: 0, rejected: 0, none: 0 };
  #oldest: string | null = null;
  #newest: string | null = null;

  constructor(source: string, keyOrdered: boolean) {
    this.#source = source;
    this.#ids = new DistinctIds(keyOrdered);
  }

  /** An entry read from its value. */
  add(r: EntryRecord): void {
    this.#ids.add(r.namespace, r.id);
    // Stored with the entry; read from the response for recordings made before usage was.
    const usage = r.entry.meta.usage ?? extractUsage(r.entry.response);
    const s = sums();
    s.entries = 1;
    s.bytes = r.bytes;
    s.durationUs = durationUs(r.entry.meta.durationMs);
    if (usage === undefined) s.noUsage = 1;
    else {
      s.inputTokens = usage.inputTokens;
      s.outputTokens = usage.outputTokens;
      const nano = nanoUsd(callKind(r.entry.manifest).model(r.entry.manifest), usage);
      if (nano === undefined) s.unpriced = 1;
      else s.nanoUsd = nano;
    }
    this.#add(r.namespace, r.entry.manifest.role, modelLabel(r.entry.manifest), s);
    const verdict = r.entry.meta.verdict?.verdict;
    this.#verdicts[verdict ?? "none"]++;
    this.#times(r.entry.meta.recordedAt, r.entry.meta.recordedAt);
  }

  /**
   * A store's sums (`Store.statsMeta`). A group's dollars: its entries
   * counted by exact tokens (`usages`: past `DETAIL_ABOVE` input tokens,
   * cache counts past the input, or a model priced one by one) each priced
   * once per distinct count; the rest priced from their summed tokens at the
   * model's unit prices (`unitPrices`), which is exact below its first tier.
   */
  addMetaStats(stats: MetaStats): void {
    const detailed = new Map<
      string,
      { tokens: MetaStatsTokens; entries: number; nano: number; unpriced: number }
    >();
    for (const u of stats.usages) {
      const id = statsKeyId(u);
      let d = detailed.get(id);
      if (d === undefined) {
        d = {
          tokens: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
          entries: 0,
          nano: 0,
          unpriced: 0,
        };
        detailed.set(id, d);
      }
      d.entries += u.entries;
      d.tokens.inputTokens += u.inputTokens * u.entries;
      d.tokens.outputTokens += u.outputTokens * u.entries;
      d.tokens.cacheReadTokens += u.cacheReadTokens * u.entries;
      d.tokens.cacheWriteTokens += u.cacheWriteTokens * u.entries;
      const nano = nanoUsd(u.model, summedUsage(u));
      if (nano === undefined) d.unpriced += u.entries;
      else d.nano += nano * u.entries;
    }
    for (const g of stats.groups) {
      const withUsage = g.usage === "none" ? 0 : g.entries;
      const s: Sums = {
        entries: g.entries,
        bytes: g.bytes,
        durationUs: g.durationUs,
        inputTokens: g.inputTokens,
        outputTokens: g.outputTokens,
        nanoUsd: 0,
        unpriced: 0,
        noUsage: g.entries - withUsage,
      };
      const d = detailed.get(statsKeyId(g));
      const rest = withUsage - (d?.entries ?? 0);
      if (d !== undefined) {
        s.nanoUsd += d.nano;
        s.unpriced += d.unpriced;
      }
      if (rest > 0) {
        const t = d?.tokens;
        const left: MetaStatsTokens & Pick<MetaStatsKey, "usageModel"> = {
          inputTokens: g.inputTokens - (t?.inputTokens ?? 0),
          outputTokens: g.outputTokens - (t?.outputTokens ?? 0),
          cacheReadTokens: g.cacheReadTokens - (t?.cacheReadTokens ?? 0),
          cacheWriteTokens: g.cacheWriteTokens - (t?.cacheWriteTokens ?? 0),
        };
        if (g.usageModel !== undefined) left.usageModel = g.usageModel;
        const unit = unitPrices(g.model, g.usageModel);
        if (unit === undefined) s.unpriced += rest;
        else if (unit !== null) {
          s.nanoUsd +=
            (left.inputTokens - left.cacheReadTokens - left.cacheWriteTokens) * unit.input +
            left.outputTokens * unit.output +
            left.cacheReadTokens * unit.cacheRead +
            left.cacheWriteTokens * unit.cacheWrite;
        } else {
          // modelsToDetail had every entry of this model counted exactly: these
          // were written between the two passes. Priced as one call (close, not exact).
          const nano = nanoUsd(g.model, summedUsage(left));
          if (nano === undefined) s.unpriced += rest;
          else s.nanoUsd += nano;
        }
      }
      this.#add(g.namespace, g.role, metaModelLabel(g), s);
      this.#verdicts.accepted += g.accepted;
      this.#verdicts.rejected += g.rejected;
      this.#verdicts.none += g.entries - g.accepted - g.rejected;
    }
    this.#idCount += stats.ids;
    this.#times(stats.oldest, stats.newest);
  }

  #add(namespace: string, role: string, label: string, s: Sums): void {
    addSums(this.#total, s);
    for (const [groups, name] of [
      [this.#groups.byNamespace, namespace],
      [this.#groups.byRole, role],
      [this.#groups.byModel, label],
    ] as const) {
      let into = groups.get(name);
      if (into === undefined) {
        into = sums();
        groups.set(name, into);
      }
      addSums(into, s);
    }
  }

  #times(oldest: string | undefined, newest: string | undefined): void {
    if (oldest !== undefined && (this.#oldest === null || oldest < this.#oldest))
      this.#oldest = oldest;
    if (newest !== undefined && (this.#newest === null || newest > this.#newest))
      this.#newest = newest;
  }

  report(runs: number, problems: number): StatsReport {
    const byName = (groups: Map<string, Sums>) => {
      const out: Record<string, GroupStats> = {};
      for (const [name, s] of groups) out[name] = groupStats(s);
      return out;
    };
    return {
      source: this.#source,
      ...groupStats(this.#total),
      ids: this.#ids.size + this.#idCount,
      runs,
      oldest: this.#oldest,
      newest: this.#newest,
      verdicts: { ...this.#verdicts },
      byNamespace: byName(this.#groups.byNamespace),
      byRole: byName(this.#groups.byRole),
      byModel: byName(this.#groups.byModel),
      problems,
      prices: { ...PRICE_SNAPSHOT },
    };
  }
}

/**
 * Input tokens past which a store counts an entry by its exact tokens: no
 * price tier in the table starts below it (a model whose tier does is
 * counted whole, see modelsToDetail), so the rest of a group is priced
 * from its sums. Prompts this long are rare; each one is a row.
 */
const DETAIL_ABOVE = 128_000;

/**
 * The models whose every entry a store must count by exact tokens: those
 * whose token costs are not whole nanodollars, or whose first price tier
 * starts at or below `DETAIL_ABOVE`.
 */
function modelsToDetail(stats: MetaStats): string[] {
  const names = new Set<string>();
  for (const g of stats.groups) {
    if (g.usage !== "ok") continue;
    const unit = unitPrices(g.model, g.usageModel);
    if (unit === null || (unit !== undefined && unit.tierStart < DETAIL_ABOVE)) {
      if (g.model !== undefined) names.add(g.model);
      if (g.usageModel !== undefined) names.add(g.usageModel);
    }
  }
  return [...names].sort();
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
 * The stats from the store's stored metadata, summed by the store
 * (`Store.statsMeta`) without a row crossing to us: undefined when the
 * source has none to answer from (a cassette), or the store is not migrated
 * (said on stderr, with the command that fixes it; the caller then reads
 * the values as before). A second pass counts the exact tokens of the few
 * models whose price is not linear in them (tiers), when the store has any.
 */
async function statsFromMeta(
  source: ReturnType<typeof openSource>,
  io: Io,
): Promise<{ report: StatsReport; problems: SourceProblem[] } | undefined> {
  let stats: MetaStats | undefined;
  let detail: string[] = [];
  const bar = progress(io, `reading ${source.url}`);
  // The rows summed so far, a page at a time: the bar counts rows, as when they were read here.
  let shown = 0;
  const onProgress = (rows: number) => {
    bar.tick(Math.max(0, rows - shown));
    shown = Math.max(shown, rows);
  };
  try {
    stats = await source.metaStats?.([], DETAIL_ABOVE, onProgress);
    if (stats === undefined) return undefined;
    detail = modelsToDetail(stats);
    if (detail.length > 0) {
      shown = 0;
      stats = await source.metaStats!(detail, DETAIL_ABOVE, onProgress);
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
  const fold = new StatsFold(source.url, true);
  fold.addMetaStats(stats!);
  const first = stats!.firstProblem;
  const problems =
    first === undefined
      ? []
      : [
          metaProblem(source.url, {
            key: first.key,
            kind: "problem",
            bytes: 0,
            problem: first.problem,
          }),
        ];
  return { report: fold.report(stats!.runs, stats!.problems), problems };
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
