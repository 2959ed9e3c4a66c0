/**
 * The viewer's totals from a store's sums (`Store.statsMeta`, the stats
 * summary the database keeps) equal the totals the walk over every row's
 * metadata counts, on memory, a real SQLite file and a real PostgreSQL:
 * entries, namespaces, roles, models, model time, tokens, dollars,
 * problems and runs, over the mixed values of the stats tests (every kind
 * of usage, tools, a problem, a run, a value that is neither). And the
 * summed count does not walk the store (no unbounded `listMeta` of every
 * row), which is what kept the first page of a 1M-entry PostgreSQL store
 * waiting. A store holding runs in a namespace without entries falls back
 * to the walk, which finds them.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import type { MetaQuery } from "../../src/store/meta-types.js";
import { mixedStatsRows } from "../../src/testing/stats-mixed.js";
import { MetaCatalog, type MetaTotals } from "../../src/viewer/meta-catalog.js";
import { usePostgresServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const postgres = usePostgresServer();

/** `store` with its methods bound, `statsMeta` hidden when `sums` is false, and its `listMeta` queries logged. */
function view(store: Store, sums: boolean, queries: MetaQuery[]): Store {
  return new Proxy(store, {
    get(target, p) {
      if (p === "statsMeta" && !sums) return undefined;
      if (p === "listMeta")
        return (q: MetaQuery = {}) => {
          queries.push(q);
          return target.listMeta!(q);
        };
      const v = Reflect.get(target, p, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** The totals with floats rounded (µs sums against ms sums) and the time of reading left out. */
function comparable(t: MetaTotals) {
  const r = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    ...t,
    readAt: 0,
    totalMs: r(t.totalMs),
    namespaces: t.namespaces.map((n) => ({ ...n, ms: r(n.ms) })),
    recorded: { ...t.recorded, ms: r(t.recorded.ms), usd: r(t.recorded.usd) },
    runSpend: [...t.runSpend],
  };
}

async function expectSameTotals(store: Store, summed: boolean): Promise<MetaTotals> {
  const walkQueries: MetaQuery[] = [];
  const sumQueries: MetaQuery[] = [];
  const walked = await new MetaCatalog(view(store, false, walkQueries), 60_000).totals();
  const fromSums = await new MetaCatalog(view(store, true, sumQueries), 60_000).totals();
  expect(comparable(fromSums)).toEqual(comparable(walked));
  // The walk reads every row once; the summed count reads none of them unbounded.
  const unbounded = (q: MetaQuery) => q.prefix === undefined && q.limit === undefined;
  expect(walkQueries.filter(unbounded)).toHaveLength(1);
  expect(sumQueries.filter(unbounded)).toHaveLength(summed ? 0 : 1);
  return fromSums;
}

async function check(url: string): Promise<void> {
  const store = openStore(url);
  try {
    for (const ns of ["a", "b"])
      for (const { key, value } of mixedStatsRows(ns)) await store.set(key, value);
    const t = await expectSameTotals(store, true);
    // Not vacuous: what the mixed values hold is there.
    expect(t.entries).toBeGreaterThan(10);
    expect(t.namespaces.map((n) => n.name)).toEqual(["a", "b"]);
    expect(t.problems.length).toBe(2);
    expect(t.recorded.usd).toBeGreaterThan(0);
    expect(t.recorded.unpriced + t.recorded.noUsage).toBeGreaterThan(0);
    expect(t.models.length).toBeGreaterThan(1);
    // A run in a namespace with no entries: not found by the namespaces' prefixes, so walked.
    await store.set("only-runs:run:r9", { runId: "r9" });
    await expectSameTotals(store, false);
  } finally {
    await store.close();
  }
}

describe("the viewer's totals from a store's sums equal the walk's", () => {
  it("memory", async () => {
    await check("memory://");
  });

  it("SQLite (the summary the triggers keep)", async () => {
    await check(`sqlite://${join(tempDir("meta-totals"), "s.sqlite")}`);
  });

  it.skipIf(postgres.skip)(
    "PostgreSQL (the summary and its deltas)",
    async () => {
      await check(postgres.url());
    },
    60_000,
  );
});
