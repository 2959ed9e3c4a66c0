/**
 * Stored stats (`Store.statsMeta`): the figures `invocache stats` prints,
 * summed from stored metadata. The database backends sum a page of rows at
 * a time where the data is (SQL GROUP BY, a Lua script on Redis) and hand
 * the page's groups to {@link MetaStatsSum}; a store that only lists its
 * metadata (memory, cassette) is folded here row by row
 * ({@link foldMetaStats}), so every store answers the same shape and the
 * same integers.
 *
 * Pure: no store is read here but through what it is given.
 */
import type {
  MetaStats,
  MetaStatsGroup,
  MetaStatsKey,
  MetaStatsQuery,
  MetaStatsTokens,
  MetaStatsUsage,
  StoredMeta,
} from "./meta-types.js";
import type { Store } from "./types.js";
import type { Usage } from "./usage-format.js";

/**
 * A duration in whole µs, rounded half up: what every backend sums (the
 * SQL and Lua spell the same `floor(ms * 1000 + 0.5)` on the same doubles).
 *
 * @example
 * durationUs(12.3456) // 12346
 */
export function durationUs(ms: number): number {
  return Math.floor(ms * 1000 + 0.5);
}

/** The usage class of `MetaStatsKey.usage`. */
export function usageClass(usage: Usage | undefined): MetaStatsKey["usage"] {
  if (usage === undefined) return "none";
  const cached = (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  return cached > usage.inputTokens ? "over" : "ok";
}

/**
 * Summed token counts (a `MetaStatsGroup`'s, or one row of `usages`) as one
 * `Usage` to price: prices are per token below a price's first tier, so a
 * sum prices as its calls would. The shape is not priced by: any will do.
 *
 * @example
 * costOf(g.model, summedUsage(g)) // the group's calls, priced at once
 */
export function summedUsage(t: MetaStatsTokens & Pick<MetaStatsKey, "usageModel">): Usage {
  const usage: Usage = {
    shape: "openai.chat",
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
  };
  if (t.cacheReadTokens > 0) usage.cacheReadTokens = t.cacheReadTokens;
  if (t.cacheWriteTokens > 0) usage.cacheWriteTokens = t.cacheWriteTokens;
  if (t.usageModel !== undefined) usage.model = t.usageModel;
  return usage;
}

/** The group of an entry's metadata. */
export function statsKeyOf(m: StoredMeta): MetaStatsKey {
  const key: MetaStatsKey = {
    namespace: m.namespace ?? "",
    role: m.role ?? "",
    usage: usageClass(m.usage),
  };
  if (m.tool !== undefined) {
    key.tool = { name: m.tool.name, version: m.tool.version };
    if (m.tool.server !== undefined) key.tool.server = m.tool.server;
  } else if (m.model !== undefined) key.model = m.model;
  if (m.usage?.model !== undefined) key.usageModel = m.usage.model;
  return key;
}

/** A group's identity as text: equal keys, equal text, on every store. */
export function statsKeyId(k: MetaStatsKey): string {
  return JSON.stringify([
    k.namespace,
    k.role,
    k.model ?? null,
    k.tool?.server ?? null,
    k.tool?.name ?? null,
    k.tool?.version ?? null,
    k.usageModel ?? null,
    k.usage,
  ]);
}

/**
 * The key of a group as a backend returns it: columns that are null where
 * the entry has no such field (SQL NULL, Lua `false`), normalized.
 */
export function statsKeyFromColumns(c: {
  namespace: unknown;
  role: unknown;
  model: unknown;
  toolServer: unknown;
  toolName: unknown;
  toolVersion: unknown;
  usageModel: unknown;
  usage: unknown;
}): MetaStatsKey {
  const present = (v: unknown) => v !== null && v !== undefined && v !== false;
  const key: MetaStatsKey = {
    namespace: String(c.namespace ?? ""),
    role: String(c.role ?? ""),
    usage: String(c.usage) as MetaStatsKey["usage"],
  };
  if (present(c.toolName)) {
    key.tool = { name: String(c.toolName), version: Number(c.toolVersion) };
    if (present(c.toolServer)) key.tool.server = String(c.toolServer);
  } else if (present(c.model)) key.model = String(c.model);
  if (present(c.usageModel)) key.usageModel = String(c.usageModel);
  return key;
}

const SUMS = [
  "entries",
  "bytes",
  "durationUs",
  "accepted",
  "rejected",
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
] as const;
const TOKENS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"] as const;

/** The distinct-id key of an entry: ids are counted per namespace. */
function pairOf(namespace: string, id: string): string {
  return `${namespace}:${id}`;
}

/**
 * The stats being summed: groups, token details, ids, runs, problems and the
 * time range, from pages (a backend's partial sums) or single rows.
 */
export class MetaStatsSum {
  readonly #groups = new Map<string, MetaStatsGroup>();
  readonly #usages = new Map<string, MetaStatsUsage>();
  #ids = 0;
  #lastPair: string | undefined;
  #runs = 0;
  #problems = 0;
  #firstProblem: { key: string; problem: string } | undefined;
  #oldest: string | undefined;
  #newest: string | undefined;
  /** Single rows only: the distinct ids seen (rows in any order). */
  readonly #pairs = new Set<string>();

  /** Add a page's sums of one group. */
  addGroup(g: MetaStatsGroup): void {
    const id = statsKeyId(g);
    const into = this.#groups.get(id);
    if (into === undefined) {
      this.#groups.set(id, { ...g });
      return;
    }
    for (const k of SUMS) into[k] += g[k];
  }

  /** Add a page's count of entries of one group with exactly these tokens. */
  addUsage(u: MetaStatsUsage): void {
    const id = `${statsKeyId(u)}${TOKENS.map((k) => u[k]).join(",")}`;
    const into = this.#usages.get(id);
    if (into === undefined) this.#usages.set(id, { ...u });
    else into.entries += u.entries;
  }

  /**
   * Add a page's distinct ids, pages coming in key order: the page's first
   * and last entry (namespace and id) join it to the pages beside it, where
   * the occurrences of one id may be split.
   */
  addIds(count: number, first: [string, string], last: [string, string]): void {
    if (count === 0) return;
    const firstPair = pairOf(...first);
    this.#ids += count - (firstPair === this.#lastPair ? 1 : 0);
    this.#lastPair = pairOf(...last);
  }

  /**
   * Add ids counted elsewhere, none of them among the ids of the pages
   * (the store's own count of the ids its summary holds, sql-meta-summary.ts).
   */
  addDistinctIds(count: number): void {
    this.#ids += count;
  }

  addRuns(count: number): void {
    this.#runs += count;
  }

  /** Add problems; `first` the first of them in key order (of this page). */
  addProblems(count: number, first?: { key: string; problem: string }): void {
    this.#problems += count;
    if (
      first !== undefined &&
      (this.#firstProblem === undefined || first.key < this.#firstProblem.key)
    )
      this.#firstProblem = first;
  }

  /** Add the recording times of entries. */
  addTimes(oldest: string | undefined, newest: string | undefined): void {
    if (oldest !== undefined && (this.#oldest === undefined || oldest < this.#oldest))
      this.#oldest = oldest;
    if (newest !== undefined && (this.#newest === undefined || newest > this.#newest))
      this.#newest = newest;
  }

  /**
   * Add one live row (a store that only lists its metadata). `detail`: the
   * models of `MetaStatsQuery.usageDetail`.
   */
  addMeta(m: StoredMeta, detail: ReadonlySet<string>, above = Number.POSITIVE_INFINITY): void {
    if (m.kind === "run") this.addRuns(1);
    else if (m.kind === "problem") this.addProblems(1, { key: m.key, problem: m.problem ?? m.key });
    if (m.kind !== "entry") return;
    const key = statsKeyOf(m);
    const u = m.usage;
    const tokens = {
      inputTokens: u?.inputTokens ?? 0,
      outputTokens: u?.outputTokens ?? 0,
      cacheReadTokens: u?.cacheReadTokens ?? 0,
      cacheWriteTokens: u?.cacheWriteTokens ?? 0,
    };
    this.addGroup({
      ...key,
      ...tokens,
      entries: 1,
      bytes: m.bytes,
      durationUs: durationUs(m.durationMs ?? 0),
      accepted: m.verdict === "accepted" ? 1 : 0,
      rejected: m.verdict === "rejected" ? 1 : 0,
    });
    if (
      u !== undefined &&
      (key.usage === "over" ||
        u.inputTokens > above ||
        detail.has(key.model ?? "") ||
        detail.has(key.usageModel ?? ""))
    ) {
      this.addUsage({ ...key, ...tokens, entries: 1 });
    }
    this.#pairs.add(pairOf(m.namespace ?? "", m.id ?? ""));
    this.addTimes(m.recordedAt, m.recordedAt);
  }

  result(): MetaStats {
    const byId = <T extends MetaStatsKey>(rows: Map<string, T>): T[] =>
      [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
    const stats: MetaStats = {
      groups: byId(this.#groups),
      usages: byId(this.#usages),
      ids: this.#ids + this.#pairs.size,
      runs: this.#runs,
      problems: this.#problems,
    };
    if (this.#firstProblem !== undefined) stats.firstProblem = this.#firstProblem;
    if (this.#oldest !== undefined) stats.oldest = this.#oldest;
    if (this.#newest !== undefined) stats.newest = this.#newest;
    return stats;
  }
}

/**
 * The stats of live metadata rows (`Store.listMeta`'s), folded one at a
 * time: what a store without `statsMeta` answers, and what every store's
 * `statsMeta` must equal.
 *
 * @example
 * await foldMetaStats(store.listMeta!({ prefix: "default:" }), {})
 */
export async function foldMetaStats(
  rows: AsyncIterable<StoredMeta>,
  query: MetaStatsQuery = {},
  onProgress?: (rows: number) => void,
): Promise<MetaStats> {
  const sum = new MetaStatsSum();
  const detail = new Set(query.usageDetail ?? []);
  let seen = 0;
  for await (const m of rows) {
    if (++seen % 1000 === 0) onProgress?.(seen);
    if (query.prefix !== undefined && !m.key.startsWith(query.prefix)) continue;
    sum.addMeta(m, detail, query.usageDetailAbove);
  }
  onProgress?.(seen);
  return sum.result();
}

/**
 * Check a `MetaStatsQuery` (every store, before it reaches the backend).
 *
 * @throws TypeError naming the field.
 */
export function checkMetaStatsQuery(query: MetaStatsQuery): void {
  if (typeof query !== "object" || query === null) throw new TypeError("query must be an object");
  if (query.prefix !== undefined && typeof query.prefix !== "string")
    throw new TypeError("query.prefix must be a string");
  if (
    query.usageDetail !== undefined &&
    (!Array.isArray(query.usageDetail) || query.usageDetail.some((m) => typeof m !== "string"))
  )
    throw new TypeError("query.usageDetail must be an array of model names");
  if (
    query.usageDetailAbove !== undefined &&
    (typeof query.usageDetailAbove !== "number" || Number.isNaN(query.usageDetailAbove))
  )
    throw new TypeError("query.usageDetailAbove must be a number");
}

/**
 * The stats of any store that keeps or computes metadata: its `statsMeta`,
 * or the fold of its `listMeta` (a cassette); undefined for a store with neither.
 *
 * @example
 * const stats = await metaStatsOf(store, { prefix: "default:" });
 */
export function metaStatsOf(
  store: Pick<Store, "statsMeta" | "listMeta">,
  query: MetaStatsQuery = {},
  onProgress?: (rows: number) => void,
): Promise<MetaStats> | undefined {
  if (store.statsMeta !== undefined) return store.statsMeta(query, onProgress);
  if (store.listMeta === undefined) return undefined;
  checkMetaStatsQuery(query);
  return foldMetaStats(store.listMeta({ prefix: query.prefix ?? "" }), query, onProgress);
}
