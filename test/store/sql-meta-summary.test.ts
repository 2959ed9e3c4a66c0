/**
 * The stats summary kept by the database (src/store/backends/sql-meta-summary.ts)
 * on a real SQLite file and a real PostgreSQL: after every kind of write
 * (new rows, overwrites into another group, deletes, a value written by
 * keyv alone, rows with an expiry, eight writers at once on one group) the
 * summary is in use and `statsMeta` equals the fold of `listMeta`; a store
 * made before it gains it through `migrateMeta`, filled from its rows.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PG_SUMMARY } from "../../src/store/backends/sql-meta-summary.js";
import { foldMetaStats, openStore, type Store } from "../../src/store/index.js";
import { mixedStatsRows } from "../../src/testing/stats-mixed.js";
import { pgClient } from "../helpers/postgres-server.js";
import { usePostgresServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const postgres = usePostgresServer();
const QUERY = { usageDetail: ["gemini-1.5-flash"], usageDetailAbove: 1000 };
type Run = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

const sqlite3 = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"))(
  "sqlite3",
) as {
  Database: new (
    f: string,
  ) => {
    all(sql: string, p: unknown[], cb: (e: Error | null, r: unknown[]) => void): void;
    close(cb: () => void): void;
  };
};

async function expectStatsAgree(store: Store): Promise<void> {
  const expected = await foldMetaStats(store.listMeta!({}), QUERY);
  expect(await store.statsMeta!(QUERY)).toStrictEqual(expected);
  // Without the detail models and threshold too (the CLI's first pass).
  const plain = await foldMetaStats(store.listMeta!({}), {});
  expect(await store.statsMeta!({})).toStrictEqual(plain);
}

/** Every kind of write, checking after each, on a store whose summary is in use. */
async function exercise(store: Store, run: Run, delta: string): Promise<void> {
  const summed = async () => Number((await run(`SELECT count(*) AS n FROM ${delta}`))[0]?.n);
  for (const ns of ["a", "b"]) {
    for (const { key, value } of mixedStatsRows(ns)) await store.set(key, value);
  }
  expect(await summed()).toBeGreaterThan(0);
  await expectStatsAgree(store);
  // Overwrites: b's keys now hold a's other values (other groups, other ids' times).
  const a2 = mixedStatsRows("a", "a2");
  const b = mixedStatsRows("b");
  for (const [i, { key }] of b.entries()) await store.set(key, a2[i % a2.length]!.value);
  await expectStatsAgree(store);
  // Deletes, every other row.
  for (const [i, { key }] of mixedStatsRows("a").entries()) {
    if (i % 2 === 0) await store.delete(key);
  }
  await expectStatsAgree(store);
  // Rows with an expiry: live now, summed from the rows, never from the summary.
  for (const { key, value } of mixedStatsRows("c")) await store.set(key, value, { ttlMs: 60_000 });
  await expectStatsAgree(store);
  // A value written by keyv alone: its metadata is cleared, the row is missing, not summed.
  const [victim] = mixedStatsRows("b");
  await run(`UPDATE invocache_entries SET value = 'x' WHERE key = '${victim!.key}'`);
  await expect(store.statsMeta!(QUERY)).rejects.toThrow(/without metadata|missing/);
  await store.delete(victim!.key);
  await expectStatsAgree(store);
  // Everything gone: the summary holds nothing.
  for (const ns of ["a", "b", "c"]) {
    for (const { key } of mixedStatsRows(ns)) await store.delete(key);
  }
  const empty = await store.statsMeta!(QUERY);
  expect(empty).toStrictEqual(await foldMetaStats(store.listMeta!({}), QUERY));
  expect(empty.groups).toStrictEqual([]);
  expect(empty.ids).toBe(0);
}

describe("the stats summary", () => {
  it("SQLite: equals the fold of listMeta after every kind of write", async () => {
    const file = join(tempDir("sql-meta-summary"), "s.sqlite");
    const store = openStore(`sqlite://${file}`);
    await store.set("warm:e:0:0", null).catch(() => {});
    const db = new sqlite3.Database(file);
    const run: Run = (sql, params = []) =>
      new Promise((resolve, reject) =>
        db.all(sql, params, (e, r) => (e ? reject(e) : resolve(r as never))),
      );
    try {
      await store.delete("warm:e:0:0");
      await exercise(store, run, "invocache_stats_sum WHERE n <> 0");
    } finally {
      await new Promise<void>((resolve) => db.close(resolve));
      await store.close();
    }
  });

  it("SQLite: a store made before the summary gains it filled from its rows by migrateMeta", async () => {
    const file = join(tempDir("sql-meta-summary"), "old.sqlite");
    const store = openStore(`sqlite://${file}`);
    for (const { key, value } of mixedStatsRows("a")) await store.set(key, value);
    await store.close();
    const db = new sqlite3.Database(file);
    const run: Run = (sql, params = []) =>
      new Promise((resolve, reject) =>
        db.all(sql, params, (e, r) => (e ? reject(e) : resolve(r as never))),
      );
    // As the version before the summary left it.
    for (const name of ["ins", "del", "upd_old", "upd_new"]) {
      await run(`DROP TRIGGER invocache_stats_${name}`);
    }
    for (const name of ["at", "usage", "live"]) await run(`DROP INDEX invocache_stats_${name}`);
    await run("DROP TABLE invocache_stats_sum");
    await run("DROP TABLE invocache_stats_ids");
    await new Promise<void>((resolve) => db.close(resolve));
    const again = openStore(`sqlite://${file}`);
    try {
      for (const { key, value } of mixedStatsRows("b")) await again.set(key, value);
      await expectStatsAgree(again);
      await again.migrateMeta!();
      await expectStatsAgree(again);
      for (const { key } of mixedStatsRows("a")) await again.delete(key);
      await expectStatsAgree(again);
    } finally {
      await again.close();
    }
  });

  it("SQLite: the entries recorded before a time, in key order, from the time index when few", async () => {
    const store = openStore(`sqlite://${join(tempDir("sql-meta-summary"), "before.sqlite")}`);
    try {
      for (const ns of ["a", "b", "c"]) {
        for (const { key, value } of mixedStatsRows(ns)) await store.set(key, value);
      }
      const all = [];
      for await (const m of store.listMeta!({})) all.push(m);
      const times = [...new Set(all.flatMap((m) => (m.kind === "entry" ? [m.recordedAt!] : [])))];
      times.sort();
      expect(times.length).toBeGreaterThan(2);
      for (const bound of ["2000-01-01", times[1]!, times.at(-1)!, "9999-01-01"]) {
        const listed = [];
        for await (const m of store.listMeta!({ recordedBefore: bound })) listed.push(m.key);
        const expected = all
          .filter((m) => m.kind === "entry" && m.recordedAt! < bound)
          .map((m) => m.key);
        expect(listed).toStrictEqual(expected);
      }
    } finally {
      await store.close();
    }
  });

  it.skipIf(postgres.skip)(
    "PostgreSQL: equals the fold of listMeta after every kind of write, and with eight writers at once",
    async () => {
      const store = openStore(postgres.url());
      const client = pgClient(postgres.url());
      await client.connect();
      const run: Run = async (sql, params) => (await client.query(sql, params)).rows;
      try {
        await exercise(store, run, "invocache_stats_sum");
        // Eight writers, one group, at once: no writer waits on another's
        // summary row (delta rows), and the reader folds what piled up.
        const writers = Array.from({ length: 8 }, () => openStore(postgres.url()));
        const rows = mixedStatsRows("d");
        await Promise.all(
          writers.map(async (w, i) => {
            for (let round = 0; round < 20; round++) {
              const { key, value } = rows[(i + round) % rows.length]!;
              await w.set(`${key}`, value);
              if (round % 3 === 0) await w.delete(key);
            }
          }),
        );
        await Promise.all(writers.map((w) => w.close()));
        await expectStatsAgree(store);
        // The deltas folded into one row per group (as the reader does past
        // PG_COMPACT_ABOVE of them): the same sums.
        const before = Number((await run("SELECT count(*) AS n FROM invocache_stats_sum"))[0]?.n);
        await run(PG_SUMMARY.compact!.fold);
        const after = Number((await run("SELECT count(*) AS n FROM invocache_stats_sum"))[0]?.n);
        expect(after).toBeLessThan(before);
        await expectStatsAgree(store);
      } finally {
        await client.end();
        await store.close();
      }
    },
  );
});
