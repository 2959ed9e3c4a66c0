/**
 * The overview's totals from a store's sums (`Store.statsMeta`): entries,
 * namespaces, roles, models, model time and what the recordings cost,
 * folded from its groups. Where the database keeps those sums (the stats
 * summary of SQLite and PostgreSQL, src/store/backends/sql-meta-summary.ts)
 * this is a few hundred rows at any size, where walking every entry's
 * metadata took 24 s at 1M entries on PostgreSQL and held the first page
 * back. The figures are the ones that walk counts (`MetaCatalog`'s
 * fallback), priced the same way (summed tokens per model, `SpendTally`).
 */
import { type MetaStats, summedUsage } from "../store/index.js";
import { type Recorded, SpendTally } from "./spend.js";

/** The part of `MetaTotals` (meta-catalog.ts) a store's sums answer. */
export interface SummedTotals {
  entries: number;
  namespaces: Array<{ name: string; entries: number; ms: number; bytes: number }>;
  roles: string[];
  models: string[];
  totalMs: number;
  recorded: Recorded;
}

/**
 * Fold `stats` into the overview's totals, at most `facetLimit` roles and
 * models (sorted), as the walk keeps them.
 *
 * @example
 * summedTotals(await store.statsMeta!(), 500).entries // 1000000
 */
export function summedTotals(stats: MetaStats, facetLimit: number): SummedTotals {
  const ns = new Map<string, { name: string; entries: number; ms: number; bytes: number }>();
  const roles = new Set<string>();
  const models = new Set<string>();
  const tally = new SpendTally();
  let entries = 0;
  let totalUs = 0;
  for (const g of stats.groups) {
    if (g.entries === 0) continue;
    entries += g.entries;
    totalUs += g.durationUs;
    const ms = g.durationUs / 1000;
    const model = g.model ?? "";
    const tool = g.tool !== undefined;
    // A tool call's usage is not counted (summaryOfMeta leaves it out), as the walk.
    tally.addMany(g.entries, ms, {
      kind: tool ? "tool" : "model",
      model,
      usage: tool || g.usage === "none" ? undefined : summedUsage(g),
    });
    let n = ns.get(g.namespace);
    if (n === undefined) {
      n = { name: g.namespace, entries: 0, ms: 0, bytes: 0 };
      ns.set(g.namespace, n);
    }
    n.entries += g.entries;
    n.ms += ms;
    n.bytes += g.bytes;
    roles.add(g.role);
    if (!tool && model !== "") models.add(model);
  }
  return {
    entries,
    namespaces: [...ns.values()].sort((a, b) => a.name.localeCompare(b.name)),
    roles: [...roles].sort().slice(0, facetLimit),
    models: [...models].sort().slice(0, facetLimit),
    totalMs: totalUs / 1000,
    recorded: tally.done(),
  };
}
