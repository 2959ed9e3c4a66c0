/**
 * The metadata's own columns (src/store/backends/sql-meta-columns.ts) on a
 * real SQLite file and a real PostgreSQL: `statsMeta` gives the fold of
 * `listMeta` on a store whose rows were written before the columns
 * existed, by the writer before them, and by this one, mixed; the same
 * after `migrateMeta` fills the columns; a row an older writer rewrites
 * after that is summed from its JSON again, never from stale columns.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PG_FENCED_SET_META, pgMetaParams } from "../../src/store/backends/postgres-meta.js";
import { SQLITE_FENCED_SET_META, sqliteMetaParams } from "../../src/store/backends/sqlite-meta.js";
import { foldMetaStats, openStore, type Store } from "../../src/store/index.js";
import { storedMetaOf } from "../../src/store/meta.js";
import { mixedStatsRows } from "../../src/testing/stats-mixed.js";
import { usePostgresServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const postgres = usePostgresServer();
const QUERY = { usageDetail: ["gemini-1.5-flash"], usageDetailAbove: 1000 };
type Run = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

const sqlite3 = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"))(
  "sqlite3",
) as {
  Database: new (
    f: string,
  ) => {
    all(sql: string, p: unknown[], cb: (e: Error | null, r: unknown[]) => void): void;
    exec(sql: string, cb: (e: Error | null) => void): void;
    close(cb: () => void): void;
  };
};

function sqliteRun(file: string): { run: Run; close: () => Promise<void> } {
  const db = new sqlite3.Database(file);
  return {
    run: (sql, params) =>
      new Promise((resolve, reject) =>
        db.all(sql, params, (e, r) => (e ? reject(e) : resolve(r as never))),
      ),
    close: () => new Promise<void>((resolve) => db.close(resolve)),
  };
}

/** The stats every store must give: the fold of its own listing. */
async function expectStatsAgree(store: Store): Promise<void> {
  const expected = await foldMetaStats(store.listMeta!({}), QUERY);
  expect(expected.groups.length).toBeGreaterThan(3);
  expect(await store.statsMeta!(QUERY)).toStrictEqual(expected);
  const b = await foldMetaStats(store.listMeta!({ prefix: "b:" }), QUERY);
  expect(await store.statsMeta!({ ...QUERY, prefix: "b:" })).toStrictEqual(b);
}

/** What the invocache before the columns wrote: the value, `m_meta` and `m_at`, no columns. */
function olderWrite(key: string, value: unknown): { record: string; meta: unknown[] } {
  const record = JSON.stringify({ value, expires: null });
  return { record, meta: [...sqliteMetaParams(storedMetaOf(key, value as never))] };
}

/** The layout of a file made by the invocache before the columns, with rows of namespace "a". */
async function fileBeforeColumns(file: string): Promise<void> {
  const { run, close } = sqliteRun(file);
  try {
    await run(
      "CREATE TABLE invocache_entries(key VARCHAR(255) PRIMARY KEY, value TEXT , m_meta TEXT, m_at TEXT, m_rev INTEGER)",
      [],
    );
    await run("CREATE INDEX invocache_meta_key ON invocache_entries (key, m_meta)", []);
    await run(
      "CREATE INDEX invocache_meta_at ON invocache_entries (m_at, key, m_meta) WHERE m_at IS NOT NULL",
      [],
    );
    await run(
      "CREATE INDEX invocache_meta_missing ON invocache_entries (key) WHERE m_meta IS NULL",
      [],
    );
    await run(
      `CREATE TRIGGER invocache_meta_stale AFTER UPDATE OF value ON invocache_entries
       WHEN NEW.m_rev IS OLD.m_rev
       BEGIN UPDATE invocache_entries SET m_meta = NULL, m_at = NULL WHERE key = NEW.key; END`,
      [],
    );
    for (const { key, value } of mixedStatsRows("a")) {
      const w = olderWrite(key, value);
      await run(SQLITE_FENCED_SET_META, [key, w.record, ...w.meta, Date.now() + 60_000]);
    }
  } finally {
    await close();
  }
}

describe("stored metadata columns", () => {
  it("SQLite: stats agree on rows written before the columns, by the older writer, and after; and after migrate", async () => {
    const file = join(tempDir("sql-meta-columns"), "s.sqlite");
    await fileBeforeColumns(file);
    const store = openStore(`sqlite://${file}`);
    const { run, close } = sqliteRun(file);
    try {
      // Opened as it is: no column added on open, writes keep its layout.
      for (const { key, value } of mixedStatsRows("b")) await store.set(key, value);
      const names = (await run("PRAGMA table_info(invocache_entries)", [])).map((c) => c.name);
      expect(names).not.toContain("m_cols");
      await expectStatsAgree(store);

      // The migration fills the columns of every row in SQL, once.
      expect(await store.migrateMeta!()).toBe(mixedStatsRows("a").length * 2);
      expect(await store.migrateMeta!()).toBe(0);
      const [unfilled] = await run(
        "SELECT count(*) AS n FROM invocache_entries WHERE m_cols IS NOT m_rev",
        [],
      );
      expect(unfilled?.n).toBe(0);
      await expectStatsAgree(store);

      // Rows this writer writes carry their columns; rows the older writer
      // rewrites (namespace "b", changed) are summed from their JSON.
      for (const { key, value } of mixedStatsRows("c")) await store.set(key, value);
      for (const { key, value } of mixedStatsRows("b", "b2")) {
        const w = olderWrite(key, value);
        await run(SQLITE_FENCED_SET_META, [key, w.record, ...w.meta, Date.now() + 60_000]);
      }
      const [stale] = await run(
        "SELECT count(*) AS n FROM invocache_entries WHERE m_cols IS NOT m_rev",
        [],
      );
      expect(stale?.n).toBe(mixedStatsRows("b").length);
      await expectStatsAgree(store);

      // The stats statement reads the columns' covering index.
      const plan = await run(
        "EXPLAIN QUERY PLAN SELECT key, m_ns, m_in FROM invocache_entries INDEXED BY invocache_meta_cols WHERE key > '' ORDER BY key LIMIT 5",
        [],
      );
      expect(plan.map((r) => r.detail).join(" ")).toMatch(/COVERING INDEX invocache_meta_cols/);
    } finally {
      await close();
      await store.close();
    }
  });

  it("SQLite: a value written alone (keyv, an older invocache) is reported missing, not summed from stale columns", async () => {
    const file = join(tempDir("sql-meta-columns"), "stale.sqlite");
    const store = openStore(`sqlite://${file}`);
    const [first] = mixedStatsRows("a");
    await store.set(first!.key, first!.value);
    const { run, close } = sqliteRun(file);
    try {
      await run("UPDATE invocache_entries SET value = ? WHERE key = ?", [
        JSON.stringify({ value: first!.value }),
        first!.key,
      ]);
      const [row] = await run("SELECT m_cols FROM invocache_entries WHERE key = ?", [first!.key]);
      expect(row?.m_cols).toBeNull();
      await expect(store.statsMeta!(QUERY)).rejects.toThrow(/migrate-store/);
    } finally {
      await close();
      await store.close();
    }
  });

  it.skipIf(postgres.skip)(
    "PostgreSQL: stats agree on rows without columns and with, before and after migrate",
    async () => {
      const store = openStore(postgres.url());
      const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
      const { Client } = require("pg") as {
        Client: new (o: {
          connectionString: string;
        }) => {
          connect(): Promise<void>;
          query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
          end(): Promise<void>;
        };
      };
      const client = new Client({ connectionString: postgres.url() });
      await client.connect();
      const count = async (sql: string) => Number((await client.query(sql)).rows[0]?.n);
      try {
        for (const { key, value } of mixedStatsRows("a")) await store.set(key, value);
        // The writer before the columns: m_meta and m_rev move, the columns stay as they were.
        for (const { key, value } of [...mixedStatsRows("a", "a2"), ...mixedStatsRows("b")]) {
          const record = JSON.stringify({ value, expires: null });
          await client.query(PG_FENCED_SET_META, [
            key,
            record,
            Date.now() + 60_000,
            ...pgMetaParams(storedMetaOf(key, value as never)),
          ]);
        }
        for (const { key, value } of mixedStatsRows("c")) await store.set(key, value);
        expect(
          await count(
            "SELECT count(*) AS n FROM invocache_entries WHERE m_cols IS DISTINCT FROM m_rev",
          ),
        ).toBe(mixedStatsRows("a").length * 2);
        await expectStatsAgree(store);
        expect(await store.migrateMeta!()).toBe(mixedStatsRows("a").length * 2);
        expect(
          await count(
            "SELECT count(*) AS n FROM invocache_entries WHERE m_cols IS DISTINCT FROM m_rev",
          ),
        ).toBe(0);
        await expectStatsAgree(store);
        // A value written alone clears the columns' validity with the metadata.
        const [first] = mixedStatsRows("c");
        await client.query("UPDATE invocache_entries SET value = $1 WHERE key = $2", [
          JSON.stringify({ value: first!.value }),
          first!.key,
        ]);
        expect(
          await count("SELECT count(*) AS n FROM invocache_entries WHERE m_cols IS NULL"),
        ).toBe(1);
        await expect(store.statsMeta!(QUERY)).rejects.toThrow(/migrate-store/);
      } finally {
        await client.end();
        await store.close();
      }
    },
  );
});
