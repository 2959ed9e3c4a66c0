/**
 * `statsMeta` on SQLite and PostgreSQL sums a page of rows per statement:
 * whatever the page size (one row, a page boundary inside an id's
 * occurrences, the problem on another page than the entries), the sums
 * equal the fold of listMeta. Real SQLite file, real PostgreSQL.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  PG_DIALECT,
  SQLITE_DIALECT,
  statsSqlMeta,
} from "../../src/store/backends/sql-meta-stats.js";
import { foldMetaStats, openStore, type Store } from "../../src/store/index.js";
import { mixedStatsRows } from "../../src/testing/stats-mixed.js";
import { usePostgresServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";

const postgres = usePostgresServer();
type Run = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;
const QUERY = { usageDetail: ["gemini-1.5-flash"], usageDetailAbove: 1000 };

async function fill(store: Store): Promise<void> {
  for (const ns of ["a", "b", "c"]) {
    for (const { key, value } of mixedStatsRows(ns)) await store.set(key, value);
  }
}

async function checkPages(store: Store, run: Run, dialect: typeof SQLITE_DIALECT): Promise<void> {
  const expected = await foldMetaStats(store.listMeta!({}), QUERY);
  expect(expected.ids).toBe(45);
  for (const size of [1, 2, 3, 5, 16, 1000]) {
    expect(await statsSqlMeta(run, dialect, QUERY, Date.now(), size)).toStrictEqual(expected);
  }
  const b = await foldMetaStats(store.listMeta!({ prefix: "b:" }), QUERY);
  expect(await statsSqlMeta(run, dialect, { ...QUERY, prefix: "b:" }, Date.now(), 4)).toStrictEqual(
    b,
  );
}

describe("statsMeta a page at a time", () => {
  it("SQLite: every page size gives the fold of listMeta", async () => {
    const file = join(tempDir("sql-meta-stats"), "s.sqlite");
    const store = openStore(`sqlite://${file}`);
    await fill(store);
    const sqlite3 = createRequire(import.meta.url)("sqlite3") as {
      Database: new (
        f: string,
      ) => {
        all(sql: string, p: unknown[], cb: (e: Error | null, r: unknown[]) => void): void;
        close(cb: () => void): void;
      };
    };
    const db = new sqlite3.Database(file);
    const run: Run = (sql, params) =>
      new Promise((resolve, reject) =>
        db.all(sql, params, (e, r) => (e ? reject(e) : resolve(r as never))),
      );
    try {
      await checkPages(store, run, SQLITE_DIALECT);
    } finally {
      await new Promise<void>((resolve) => db.close(resolve));
      await store.close();
    }
  });

  it.skipIf(postgres.skip)("PostgreSQL: every page size gives the fold of listMeta", async () => {
    const store = openStore(postgres.url());
    await fill(store);
    const require = createRequire(createRequire(import.meta.url).resolve("@keyv/postgres"));
    const { Client } = require("pg") as {
      Client: new (o: {
        connectionString: string;
      }) => {
        connect(): Promise<void>;
        query(sql: string, params: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
        end(): Promise<void>;
      };
    };
    const client = new Client({ connectionString: postgres.url() });
    await client.connect();
    try {
      await checkPages(
        store,
        async (sql, params) => (await client.query(sql, params)).rows,
        PG_DIALECT,
      );
    } finally {
      await client.end();
      await store.close();
    }
  });
});
