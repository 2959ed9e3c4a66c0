/**
 * `sqlite://path` through `better-sqlite3` instead of `sqlite3` (opt in with
 * `openStore(url, { sqliteDriver: "better-sqlite3" })`). Same file layout as
 * sqlite.ts (the same two tables, WAL, synchronous=NORMAL), so either driver
 * opens a file the other wrote. `better-sqlite3` is an optional peer: it is
 * loaded on first use only, and a missing package is a StoreError naming the
 * install step.
 *
 * Why it exists: `sqlite3` runs every statement on libuv's thread pool, a
 * hop that costs more than the read itself on a replay hit; `better-sqlite3`
 * runs it on the calling thread (docs/performance.md, "SQLite drivers").
 * The price of a synchronous driver: a statement waiting for another
 * connection's write lock would block this process's event loop for the
 * whole busy timeout (5 s). So each statement waits a few milliseconds
 * inside SQLite at most, and the rest of the wait is spent on timers
 * (`whenFree`): the same 5 s before the operation fails, with the event
 * loop free meanwhile.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { StoreError } from "../../errors.js";
import { makeDirectory } from "../../files/index.js";
import type { Backend, RawRow } from "../backend.js";
import { keysetPages } from "./keyset.js";
import { createKeyv } from "./keyv.js";
import { LATE } from "./late.js";
import { statsSqliteMeta } from "./sql-meta-stats.js";
import {
  BUSY_TIMEOUT_MS,
  fencedRemoval,
  fileGuard,
  SQLITE_FENCED_DELETE,
  SQLITE_FENCED_SET,
  SQLITE_HIT_SELECT,
  SQLITE_LEASES_TABLE,
  SQLITE_NOW_MS,
  SQLITE_VALUES_TABLE,
} from "./sqlite.js";
import { SQLITE_HIT_SELECT_TABLE, sqliteHasHits } from "./sqlite-hit.js";
import {
  listSqliteMeta,
  migrateSqliteMeta,
  prepareSqliteMeta,
  type SqliteMetaLayout,
  sqliteFencedSetMeta,
  sqliteMetaMissing,
  sqliteMetaParams,
} from "./sqlite-meta.js";

/** Rows per query while listing: entries may be megabytes each. */
const PAGE = 64;
/**
 * How long one statement may wait for a lock inside SQLite, blocking the
 * event loop: SQLite's busy handler sleeps 1, 2, then 5 ms steps, so a
 * statement gives up after a step or two and `whenFree` retries it later.
 */
const STEP_BUSY_MS = 5;
/** The longest pause between two tries while the lock is held elsewhere. */
const MAX_PAUSE_MS = 50;
/** The major version this backend is written and tested against (13.x needs Node 22). */
export const BETTER_SQLITE3_RANGE = "12.x";

/** The slice of better-sqlite3's API used here. */
interface Statement {
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Array<Record<string, unknown>>;
  run(...params: unknown[]): { changes: number };
  /** The statement's SQL text. */
  readonly source: string;
}
interface Database {
  prepare(sql: string): Statement;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  exec(sql: string): unknown;
  close(): unknown;
  readonly open: boolean;
}
/** The module `better-sqlite3` exports: its Database constructor. */
export type BetterSqlite3 = new (
  path: string,
  options?: { timeout?: number; readonly?: boolean; fileMustExist?: boolean },
) => Database;

/**
 * `require("better-sqlite3")` from the user's project, or a StoreError naming
 * the install step when it is not installed or its native part is missing.
 *
 * @example
 * const Database = loadBetterSqlite3("sqlite:///app/cache.sqlite");
 */
export function loadBetterSqlite3(
  storeUrl: string,
  load: () => unknown = () => createRequire(import.meta.url)("better-sqlite3"),
): BetterSqlite3 {
  try {
    const mod = load() as BetterSqlite3 | { default: BetterSqlite3 };
    return typeof mod === "function" ? mod : mod.default;
  } catch (cause) {
    const code = (cause as { code?: unknown } | null)?.code;
    const message = cause instanceof Error ? cause.message : String(cause);
    const missing =
      (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") &&
      message.includes("better-sqlite3");
    const native =
      /Could not locate the bindings file|better_sqlite3\.node|NODE_MODULE_VERSION/.test(message);
    if (!missing && !native) throw cause;
    throw new StoreError(
      storeUrl,
      "open",
      `invocache store ${storeUrl}: open failed: sqliteDriver "better-sqlite3" was asked for, but ${
        missing
          ? "the optional package better-sqlite3 is not installed"
          : `its native part is missing or was built for another Node (this is ${process.version})`
      }. Run \`npm install better-sqlite3@${BETTER_SQLITE3_RANGE}\` (it compiles unless a prebuilt binary matches), or drop the sqliteDriver option to use the default sqlite3 driver.`,
      { cause },
    );
  }
}

/**
 * Open (creating parent folders and tables as needed) the SQLite file at
 * `path` with better-sqlite3. `load` returns the module (tests point it at
 * a build outside the project).
 *
 * @example
 * const backend = await createBetterSqliteBackend("/tmp/x/cache.sqlite");
 */
export async function createBetterSqliteBackend(
  path: string,
  load?: () => unknown,
): Promise<Backend> {
  const url = `sqlite://${path}`;
  const Database = loadBetterSqlite3(url, load);
  if (path !== ":memory:") await makeDirectory(dirname(path));
  const db = new Database(path, { timeout: STEP_BUSY_MS });
  try {
    await prepare(db);
  } catch (error) {
    db.close();
    throw error;
  }
  // The stored-metadata statements (sqlite-meta.ts) are shared with the
  // sqlite3 driver: run them one at a time like every statement here.
  const metaQuery = async (sql: string, ...params: unknown[]) =>
    whenFree((): Array<Record<string, unknown>> => {
      const statement = db.prepare(sql) as Statement & { reader?: boolean };
      if (statement.reader === false) {
        statement.run(...params);
        return [];
      }
      return statement.all(...params);
    });
  let layout: SqliteMetaLayout;
  // Whether the file keeps what a hit reads beside the values (sqlite-hit.ts): hits then read it.
  let hits: boolean;
  try {
    layout = await prepareSqliteMeta(metaQuery);
    hits = await sqliteHasHits(metaQuery);
  } catch (error) {
    db.close();
    throw error;
  }
  // Prepared once the columns exist, again when a migration adds the metadata's own columns.
  let fencedSetMetaStmt: Statement | undefined;
  const getStmt = db.prepare(`SELECT value FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`);
  let getHitStmt = db.prepare(hits ? SQLITE_HIT_SELECT_TABLE : SQLITE_HIT_SELECT);
  const setStmt = db.prepare(
    `INSERT INTO ${SQLITE_VALUES_TABLE} (key, value) VALUES (?, ?)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
  );
  const deleteStmt = db.prepare(`DELETE FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`);
  // The store's writes, fenced like the leases (see setRecord below).
  const fencedSetStmt = db.prepare(SQLITE_FENCED_SET);
  const fencedDeleteStmt = db.prepare(SQLITE_FENCED_DELETE);
  const deleteIfStmt = db.prepare(
    `DELETE FROM ${SQLITE_VALUES_TABLE} WHERE key = ? AND value = ? AND ${SQLITE_NOW_MS} <= ?`,
  );
  const pageStmt = db.prepare(
    `SELECT key, value FROM ${SQLITE_VALUES_TABLE}
     WHERE key > ? AND substr(key, 1, length(?)) = ?
     ORDER BY key LIMIT ?`,
  );
  const leaseStmt = db.prepare(
    `INSERT INTO ${SQLITE_LEASES_TABLE} (key, owner, expires_at)
     SELECT ?, ?, ? WHERE ${SQLITE_NOW_MS} <= ?
     ON CONFLICT(key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
     WHERE ${SQLITE_LEASES_TABLE}.expires_at <= ? OR ${SQLITE_LEASES_TABLE}.owner = excluded.owner
     RETURNING owner`,
  );
  const releaseStmt = db.prepare(
    `DELETE FROM ${SQLITE_LEASES_TABLE} WHERE key = ? AND owner = ? AND ${SQLITE_NOW_MS} <= ?`,
  );
  // keyv over a Map-like view of the table: keyv (de)serializes and checks
  // expiry exactly as for the other backends; each call is one statement.
  // keyv awaits what each returns, so a statement retried later (a promise) fits.
  const table = {
    get: (key: string) => whenFree(() => getStmt.get(key)?.value as string | undefined),
    set: (key: string, value: string) =>
      whenFree(() => {
        setStmt.run(key, value);
        return table;
      }),
    delete: (key: string) => whenFree(() => deleteStmt.run(key).changes > 0),
    clear: () =>
      whenFree(() => {
        db.exec(`DELETE FROM ${SQLITE_VALUES_TABLE}`);
      }),
    has: (key: string) => whenFree(() => getStmt.get(key) !== undefined),
  };
  // cast: keyv accepts a Map as its store and calls only get/set/delete/clear/has, which `table` implements (awaiting each result).
  const keyv = await createKeyv(table as unknown as Map<string, string>);
  const check = path === ":memory:" ? undefined : fileGuard(path);
  return {
    keyv,
    keyPrefix: "",
    ...(check === undefined
      ? {}
      : { ready: async () => check(), verify: async () => check(), readyOnlyChecks: true }),
    async *listRaw(prefix: string): AsyncIterable<RawRow> {
      // Pages, not db.iterate(): an open iterator holds a read transaction
      // (and the connection) while the caller awaits between rows.
      yield* keysetPages(
        "",
        (after) => whenFree(() => pageStmt.all(after, prefix, prefix, PAGE)),
        (last) => String(last.key),
        PAGE,
      );
    },
    // A statement tried again after the caller's deadline (the lock was held
    // past the store's timeout) changes nothing: through keyv's set it
    // would land after the caller was told it timed out (sqlite.ts).
    async setRecord(key, record, _ttlMs, notAfter, meta) {
      const rows = await whenFree(() => {
        if (meta === undefined) return fencedSetStmt.all(key, record, notAfter).length;
        const sql = sqliteFencedSetMeta(layout);
        if (fencedSetMetaStmt?.source !== sql) fencedSetMetaStmt = db.prepare(sql);
        return fencedSetMetaStmt.all(key, record, ...sqliteMetaParams(meta, layout), notAfter)
          .length;
      });
      if (rows !== 1) throw new Error(LATE);
    },
    keepsMeta: () => layout !== "none",
    metaMissing: () => sqliteMetaMissing(metaQuery),
    listMeta: (q) => listSqliteMeta(metaQuery, q),
    statsMeta: (q, now, onProgress) => statsSqliteMeta(metaQuery, q, now, onProgress),
    async migrateMeta(onProgress) {
      const filled = await migrateSqliteMeta(metaQuery, onProgress);
      layout = "cols";
      getHitStmt = db.prepare(SQLITE_HIT_SELECT_TABLE);
      return filled;
    },
    async deleteRecord(key, notAfter) {
      return fencedRemoval(
        await whenFree(() => fencedDeleteStmt.all(key, notAfter).length),
        notAfter,
      );
    },
    async getRecord(key) {
      const row = await whenFree(() => getStmt.get(key));
      return row === undefined ? undefined : String(row.value);
    },
    async getHitRecord(key) {
      // The manifest removed by SQLite (see SQLITE_HIT_SELECT in sqlite.ts), or read from the hits' table (sqlite-hit.ts).
      const row = await whenFree(() => getHitStmt.get(key));
      return row === undefined ? undefined : String(row.value);
    },
    async deleteRecordIf(key, record, notAfter) {
      // One statement (see sqlite.ts): compare and delete under SQLite's write lock.
      // A retry past `notAfter` changes nothing: the statement checks the time itself.
      return whenFree(() => deleteIfStmt.run(key, record, notAfter).changes > 0);
    },
    async acquireLease(key, owner, ttlMs, notAfter) {
      return whenFree(() => {
        // The lease's times are taken when the statement runs, not when first tried.
        const now = Date.now();
        return leaseStmt.all(key, owner, now + ttlMs, notAfter, now).length === 1;
      });
    },
    async releaseLease(key, owner, notAfter) {
      await whenFree(() => releaseStmt.run(key, owner, notAfter));
    },
    async close() {
      if (db.open) db.close();
    },
  };
}

/**
 * Run `step` (one statement) now; when another connection holds the lock
 * (SQLITE_BUSY and its extended codes), try it again on a timer, with
 * growing, jittered pauses, until {@link BUSY_TIMEOUT_MS} has passed since
 * the first try: then its last error goes on, as sqlite3's busy timeout
 * would end it. An autocommit statement that failed busy changed nothing,
 * so trying it again is safe. The value itself, not a promise, when the
 * first try succeeds: a hit's read stays one synchronous statement.
 *
 * @example
 * const value = await whenFree(() => getStmt.get(key));
 */
function whenFree<T>(step: () => T): T | Promise<T> {
  try {
    return step();
  } catch (error) {
    if (!isBusy(error)) throw error;
    return tryLater(step, performance.now() + BUSY_TIMEOUT_MS);
  }
}

async function tryLater<T>(step: () => T, deadline: number): Promise<T> {
  for (let pause = 2; ; pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
    // Jitter: two processes waiting on the same lock do not retry in step.
    await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    try {
      return step();
    } catch (error) {
      if (!isBusy(error) || performance.now() >= deadline) throw error;
    }
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/** WAL (retried while another process holds the file), synchronous=NORMAL, both tables. */
async function prepare(db: Database): Promise<void> {
  const deadline = Date.now() + 2 * BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      const mode = String(db.pragma("journal_mode", { simple: true })).toLowerCase();
      if (mode !== "wal" && mode !== "memory") db.pragma("journal_mode = WAL");
      break;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if ((code !== "SQLITE_BUSY" && code !== "SQLITE_LOCKED") || Date.now() > deadline)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
    }
  }
  db.pragma("synchronous = NORMAL");
  // The same statements as sqlite.ts (and @keyv/sqlite's own table), so the
  // two drivers share files.
  // Creating a table takes the write lock: wait for it as every statement does.
  await whenFree(() =>
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${SQLITE_VALUES_TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT )`,
    ),
  );
  await whenFree(() =>
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${SQLITE_LEASES_TABLE} (
       key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL)`,
    ),
  );
}
