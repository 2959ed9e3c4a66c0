/**
 * `sqlite://path`: the embedded default, one file shared safely by several
 * processes. `@keyv/sqlite` opens the file and runs listing, stats and
 * migrations as plain SQL on its connection (`adapter.query`); keyed reads
 * and the fenced writes (values and leases) run on a second connection of
 * our own through statements prepared once (statementsOn).
 */
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { StoreError } from "../../errors.js";
import { makeDirectory } from "../../files/index.js";
import type { Backend, RawRow } from "../backend.js";
import { keysetPages } from "./keyset.js";
import { prepareKeyv } from "./keyv.js";
import { LATE } from "./late.js";
import { statsSqliteMeta } from "./sql-meta-stats.js";
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

/** Table of values (keyv's `key`/`value` layout). */
export const SQLITE_VALUES_TABLE = "invocache_entries";
/** Table of leases: `key`, `owner`, `expires_at` (epoch ms). */
export const SQLITE_LEASES_TABLE = "invocache_leases";

/** How long a statement waits for another process's write lock before failing. */
export const BUSY_TIMEOUT_MS = 5000;
/** The current time in epoch milliseconds, in SQLite. */
export const SQLITE_NOW_MS = "((julianday('now') - 2440587.5) * 86400000.0)";
/** Rows per query while listing: entries may be megabytes each. */
const PAGE = 64;

/**
 * The store's writes, fenced like the leases (parameters: key, value,
 * notAfter): a statement that only runs after the caller's deadline,
 * having waited for another process's write lock, changes nothing and
 * returns no row. Both drivers run these same statements.
 */
export const SQLITE_FENCED_SET = `INSERT INTO ${SQLITE_VALUES_TABLE} (key, value) SELECT ?, ? WHERE ${SQLITE_NOW_MS} <= ?
  ON CONFLICT(key) DO UPDATE SET value = excluded.value RETURNING key`;
/** The fenced delete (parameters: key, notAfter); a row when it removed one. */
export const SQLITE_FENCED_DELETE = `DELETE FROM ${SQLITE_VALUES_TABLE} WHERE key = ? AND ${SQLITE_NOW_MS} <= ? RETURNING key`;

/**
 * What a fenced delete that returned `rows` rows means: removed or not, or
 * (no row and the deadline has passed: SQLite's clock is ours) too late.
 */
export function fencedRemoval(rows: number, notAfter: number): boolean {
  if (rows === 0 && Date.now() > notAfter) throw new Error(LATE);
  return rows > 0;
}

export type SqliteQuery = (
  sql: string,
  ...params: unknown[]
) => Promise<Array<Record<string, unknown>>>;

/**
 * Open (creating parent folders and tables as needed) the SQLite file at `path`.
 *
 * @example
 * const backend = await createSqliteBackend("/tmp/x/cache.sqlite");
 */
export async function createSqliteBackend(path: string): Promise<Backend> {
  // sqlite3 is @keyv/sqlite's dependency, not ours: load it from there. First,
  // so that a missing native binding is reported before anything else.
  const fromAdapter = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"));
  const sqlite3 = loadSqlite3(`sqlite://${path}`, () => fromAdapter("sqlite3")) as Sqlite3;
  let own: RawDatabase | undefined;
  if (path !== ":memory:") {
    await makeDirectory(dirname(path));
    own = await probe(sqlite3, path);
  }
  let opened: Awaited<ReturnType<typeof openAdapter>>;
  try {
    opened = await openAdapter(path);
  } catch (error) {
    if (own !== undefined) await closeDatabase(own);
    throw error;
  }
  const { adapter, query, keyv } = opened;
  let layout: SqliteMetaLayout;
  // Whether the file keeps what a hit reads beside the values (sqlite-hit.ts): hits then read it.
  let hits: boolean;
  try {
    layout = await prepareSqliteMeta(query);
    hits = await sqliteHasHits(query);
  } catch (error) {
    await adapter.disconnect().catch(() => {});
    if (own !== undefined) await closeDatabase(own);
    throw error;
  }
  const check = path === ":memory:" ? undefined : fileGuard(path);
  // The probe's connection stays open for keyed reads. Their statement is
  // prepared beside the first operations, not before them (a cold start's
  // first read goes through the adapter meanwhile); keyv reads through the
  // adapter's get, which then answers from the prepared statement.
  const statements =
    own === undefined
      ? undefined
      : statementsOn(own, hits ? SQLITE_HIT_SELECT_TABLE : SQLITE_HIT_SELECT).then((r) => {
          if (r !== undefined) {
            // cast: keyv's adapter type declares get as a method; it is a plain writable property at run time, swapped for the prepared-statement reader.
            (adapter as unknown as { get: (key: string) => Promise<unknown> }).get = r.get;
          }
          return r;
        });

  // The fenced writes (sets, deletes, leases) go through that connection
  // too, each statement compiled once (statementsOn), and wait for it on
  // a store's first operations; through the adapter's where that connection
  // could not be had (":memory:", or its statements would not compile).
  const write = async (sql: string, ...params: unknown[]) => {
    const kept = await statements;
    return kept === undefined ? query(sql, ...params) : kept.write(sql, params);
  };

  return {
    keyv,
    keyPrefix: "",
    // Before every operation and after every write: a write is acknowledged
    // only if the file it went to is still the one at `path`.
    ...(check === undefined
      ? {}
      : { ready: async () => check(), verify: async () => check(), readyOnlyChecks: true }),
    listRaw: (prefix) => listSqliteRows(query, prefix),
    // Writes are fenced like the leases: a statement that only runs after
    // the caller's deadline, having waited for another process's write
    // lock, changes nothing. Through keyv's set they would land late, after
    // the caller was told they timed out (a store timeout below the 5 s busy
    // timeout), and could overwrite what was recorded since.
    async setRecord(key, record, _ttlMs, notAfter, meta) {
      // The expiry lives in the record (keyv's envelope), as keyv writes it.
      const rows =
        meta === undefined
          ? await write(SQLITE_FENCED_SET, key, record, notAfter)
          : await write(
              sqliteFencedSetMeta(layout),
              key,
              record,
              ...sqliteMetaParams(meta, layout),
              notAfter,
            );
      if (rows.length !== 1) throw new Error(LATE);
    },
    // Stored metadata (sqlite-meta.ts): columns written by the same statement as the value.
    keepsMeta: () => layout !== "none",
    metaMissing: () => sqliteMetaMissing(query),
    listMeta: (q) => listSqliteMeta(query, q),
    statsMeta: (q, now, onProgress) => statsSqliteMeta(query, q, now, onProgress),
    async migrateMeta(onProgress) {
      const filled = await migrateSqliteMeta(query, onProgress);
      layout = "cols";
      // This open's hits go on cutting the value (exact, only slower); the next open reads the hits' table.
      return filled;
    },
    async deleteRecord(key, notAfter) {
      return fencedRemoval((await write(SQLITE_FENCED_DELETE, key, notAfter)).length, notAfter);
    },
    async getRecord(key) {
      const [row] = await query(`SELECT value FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`, key);
      return row === undefined ? undefined : String(row.value);
    },
    async getHitRecord(key) {
      const r = await statements;
      if (r !== undefined) return r.getHit(key);
      const [row] = await query(hits ? SQLITE_HIT_SELECT_TABLE : SQLITE_HIT_SELECT, key);
      return row === undefined ? undefined : String(row.value);
    },
    async deleteRecordIf(key, record, notAfter) {
      // One statement: SQLite's write lock makes the compare and the delete
      // one step against every other process. Fenced like the leases.
      const rows = await write(
        `DELETE FROM ${SQLITE_VALUES_TABLE}
         WHERE key = ? AND value = ? AND ${SQLITE_NOW_MS} <= ? RETURNING key`,
        key,
        record,
        notAfter,
      );
      return rows.length === 1;
    },
    async acquireLease(key, owner, ttlMs, notAfter) {
      const now = Date.now();
      // One statement, so SQLite's write lock makes it atomic across processes.
      // RETURNING yields a row only when the insert or the guarded update ran.
      // The fence (SQLite's clock is ours): a statement that only runs after
      // the caller's deadline, having waited for the write lock, takes nothing.
      const rows = await write(
        `INSERT INTO ${SQLITE_LEASES_TABLE} (key, owner, expires_at)
         SELECT ?, ?, ? WHERE ${SQLITE_NOW_MS} <= ?
         ON CONFLICT(key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE ${SQLITE_LEASES_TABLE}.expires_at <= ? OR ${SQLITE_LEASES_TABLE}.owner = excluded.owner
         RETURNING owner`,
        key,
        owner,
        now + ttlMs,
        notAfter,
        now,
      );
      return rows.length === 1;
    },
    async releaseLease(key, owner, notAfter) {
      await write(
        `DELETE FROM ${SQLITE_LEASES_TABLE} WHERE key = ? AND owner = ? AND ${SQLITE_NOW_MS} <= ?`,
        key,
        owner,
        notAfter,
      );
    },
    async close() {
      await (await statements)?.close();
      await adapter.disconnect();
    },
  };
}

/** @keyv/sqlite on `path`, its tables and pragmas in place, and keyv over it. */
async function openAdapter(path: string) {
  const { KeyvSqlite } = await import("@keyv/sqlite");
  const adapter = new KeyvSqlite({
    uri: `sqlite://${path}`,
    table: SQLITE_VALUES_TABLE,
    // The adapter's own option; it calls database.configure("busyTimeout").
    // node-sqlite3 defaults to 1 s, short for several processes writing while
    // a WAL checkpoint holds the lock: SQLITE_BUSY would reach the caller.
    busyTimeout: BUSY_TIMEOUT_MS,
  });
  const query = adapter.query as unknown as SqliteQuery;
  const keyv = await prepareKeyv(adapter, () => prepare(query));
  return { adapter, query, keyv };
}

/**
 * Every row whose key starts with `prefix`, in key order, a page at a time:
 * the listing of both sqlite3 backends (read-write here, read-only in
 * sqlite-readonly.ts). substr/length count characters, so the prefix is
 * matched literally (LIKE would treat % and _ as wildcards and, in SQLite,
 * ignore ASCII case). Keyset pagination on the BINARY-ordered primary key:
 * no OFFSET rescans, and rows written meanwhile cannot shift the window.
 */
export function listSqliteRows(query: SqliteQuery, prefix: string): AsyncIterable<RawRow> {
  return keysetPages(
    "",
    (after) =>
      query(
        `SELECT key, value FROM ${SQLITE_VALUES_TABLE}
         WHERE key > ? AND substr(key, 1, length(?)) = ?
         ORDER BY key LIMIT ?`,
        after,
        prefix,
        prefix,
        PAGE,
      ),
    (last) => String(last.key),
    PAGE,
  );
}

/**
 * A hit's read (`Store.getHit`): the record with the entry's manifest
 * removed by SQLite itself, so the ~160 KB of an agent loop's turn-40
 * manifest never leave the database. Handing the whole text to JavaScript
 * cost ~2.2 ms there (the driver's copy and string creation), this
 * statement ~0.1 ms. `json_remove` renders the rest minified with strings
 * and numbers as stored (SQLite keeps their source text), and changes
 * nothing when there is no `$.value.manifest`; a text that is not valid
 * JSON is returned whole, so the store's own parse reports it as before
 * (a failed `json_remove` would be an error of another kind). Whatever
 * SQLite leaves (a duplicate `manifest` key), the store drops after parsing.
 * A file with the hits' table reads that instead (sqlite-hit.ts,
 * SQLITE_HIT_SELECT_TABLE): the same text, cut once when it was written.
 */
export const SQLITE_HIT_SELECT = `SELECT CASE WHEN json_valid(value) THEN json_remove(value, '$.value.manifest') ELSE value END AS value FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`;

/**
 * A connection of our own for reads by key, through one statement prepared
 * once, and for the store's fenced writes, each statement prepared on first
 * use and kept.
 */
interface OwnStatements {
  get(key: string): Promise<string | undefined>;
  /** The record as a hit reads it (`SQLITE_HIT_SELECT`, or from the hits' table: sqlite-hit.ts). */
  getHit(key: string): Promise<string | undefined>;
  /** Run one write statement (`sql` with `params`), prepared once per text; its rows (RETURNING). */
  write(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

/**
 * The replay hit's read, on a second connection with its statement
 * prepared once. @keyv/sqlite runs every get as `database.all(sql)`, which
 * compiles the SELECT again and builds a statement object each time: 125
 * against 59 µs per get here, most of it on the main thread
 * (docs/performance.md, "Keyed reads through a prepared statement"). The
 * adapter's connection is out of reach (kept in a closure), so the reads
 * use the probe's own connection, kept open: in WAL mode a reader never
 * blocks the writer, and each read starts after every write this process
 * was told had finished, so it sees them. Undefined (the connection
 * closed) when the statement cannot be prepared: reads then stay on the
 * adapter's.
 */
async function statementsOn(
  db: RawDatabase,
  hitSelect: string,
): Promise<OwnStatements | undefined> {
  try {
    const statement = await prepareOn(db, `SELECT value FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`);
    const hitStatement = await prepareOn(db, hitSelect);
    // `all`, not `get` + `reset`: a keyed read finds at most one row, and
    // `all` steps the statement to its end, where SQLite ends the read
    // (the snapshot is released as a reset would), in one thread-pool task.
    // A stepped `get` holds the connection's read snapshot until it is
    // reset, and with two statements on this connection the other one's
    // next read would see that old snapshot: the reset was a second task,
    // and a second wakeup of the main thread, on every hit. The callback
    // also settles a read whose statement was finalized meanwhile (the file
    // deleted or replaced: the store closes these statements) with an error.
    const read =
      (st: RawStatement) =>
      (key: string): Promise<string | undefined> =>
        new Promise((resolve, reject) =>
          st.all([key], (error, rows) => {
            if (error) reject(error);
            else {
              const row = rows[0];
              resolve(row === undefined ? undefined : String(row.value));
            }
          }),
        );
    // The writes: @keyv/sqlite's `database.all(sql)` compiles a statement
    // for every call, and a write's compile includes its triggers' (the
    // stats summary, the hits' table): 41 % of a SQLite recording's
    // thread-pool CPU (docs/performance.md, "Issue 30: recording through
    // the proxy"). Kept per text: the fenced set's text changes with the
    // metadata layout, the others never. Reads on this connection see every
    // write acknowledged before them, as they did on the adapter's.
    const writes = new Map<string, Promise<RawStatement>>();
    const writeStatement = (sql: string): Promise<RawStatement> => {
      let st = writes.get(sql);
      if (st === undefined) {
        st = prepareOn(db, sql);
        writes.set(sql, st);
        // A failed compile is not kept: the next write compiles again.
        st.catch(() => writes.delete(sql));
      }
      return st;
    };
    const write = async (sql: string, params: unknown[]) => {
      const st = await writeStatement(sql);
      return new Promise<Array<Record<string, unknown>>>((resolve, reject) =>
        st.all(params, (error, rows) => {
          if (!error) resolve(rows);
          // A statement stopped by an error is reset before the caller
          // hears of it, so that it holds nothing of this connection (a
          // read snapshot would make the reads on this connection see old
          // data). SQLite already ends a write's read when the write lock
          // stays busy (test/store/sqlite-prepared-writes.test.ts passes
          // without this reset); other errors mid-way are covered here.
          else st.reset(() => reject(error));
        }),
      );
    };
    return {
      get: read(statement),
      getHit: read(hitStatement),
      write,
      close: async () => {
        for (const st of writes.values()) {
          const made = await st.catch(() => undefined);
          if (made !== undefined) await new Promise<void>((resolve) => made.finalize(resolve));
        }
        writes.clear();
        await new Promise<void>((resolve) =>
          statement.finalize(() => hitStatement.finalize(() => db.close(() => resolve()))),
        );
      },
    };
  } catch {
    await closeDatabase(db);
    return undefined;
  }
}

/** `sql` compiled on `db`, once. */
function prepareOn(db: RawDatabase, sql: string): Promise<RawStatement> {
  return new Promise<RawStatement>((resolve, reject) => {
    const st: RawStatement = db.prepare(sql, (error) => (error ? reject(error) : resolve(st)));
  });
}

function closeDatabase(db: RawDatabase): Promise<void> {
  return new Promise<void>((resolve) => db.close(() => resolve()));
}

/**
 * A check that the file at `path` is still the one the store opened (same
 * device and inode). Deleted or replaced (its folder removed, another file
 * renamed over it), the open connection would go on reading and writing a
 * file nobody can reach, acknowledging writes that are already lost.
 *
 * The stat is synchronous: a local stat costs a microsecond or two, while an
 * async one is a second thread-pool task and a second event-loop wakeup on
 * every operation, which measured 229 against 190 µs per SQLite hit (the
 * limit, identity + one raw get, was 177 µs) and doubled the tail.
 */
export function fileGuard(path: string): () => void {
  const opened = statSync(path);
  return () => {
    let now: ReturnType<typeof statSync> | NodeJS.ErrnoException;
    try {
      now = statSync(path);
    } catch (error) {
      now = error as NodeJS.ErrnoException;
    }
    sameFile(path, opened, now);
  };
}

/**
 * Throws when `now` (a fresh stat of `path`, or the error the stat failed
 * with) shows that the file is no longer the one `opened` described: deleted
 * (ENOENT) or replaced (another device/inode). Other stat errors pass as they are.
 */
export function sameFile(
  path: string,
  opened: { ino: number; dev: number },
  now: { ino: number; dev: number } | NodeJS.ErrnoException,
): void {
  if (now instanceof Error) {
    if (now.code !== "ENOENT") throw now;
    throw new Error(
      `the SQLite file ${path} was deleted while open (it or its folder was removed): anything written since is lost. Open the store again to start a new file, or restore the file`,
      { cause: now },
    );
  }
  if (now.ino !== opened.ino || now.dev !== opened.dev) {
    throw new Error(
      `the SQLite file ${path} was replaced by another file while open (device/inode changed): anything written since went to the old file. Open the store again to use the new file`,
    );
  }
}

/**
 * Run `load` (a `require("sqlite3")`); when the native part of sqlite3 is
 * missing or built for another Node (installed with `--ignore-scripts`, or
 * node_modules copied between machines), reject with a `StoreError` naming
 * the command that builds it.
 *
 * @example
 * const sqlite3 = loadSqlite3("sqlite:///app/cache.sqlite", () => require("sqlite3"));
 */
export function loadSqlite3(storeUrl: string, load: () => unknown): unknown {
  try {
    return load();
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    if (!NATIVE_BINDING_FAILURE.test(message)) throw cause;
    throw new StoreError(
      storeUrl,
      "open",
      `invocache store ${storeUrl}: open failed: the native sqlite3 binding is missing or was built for another Node (this is ${process.version} on ${process.platform}-${process.arch}; installed with --ignore-scripts?). Run \`npm rebuild sqlite3\` (or reinstall without --ignore-scripts).`,
      { cause },
    );
  }
}

/** What `bindings` and Node's addon loader say when node_sqlite3.node is absent or unusable. */
const NATIVE_BINDING_FAILURE =
  /Could not locate the bindings file|node_sqlite3\.node|NODE_MODULE_VERSION|invalid ELF header|wrong ELF class/;

interface Sqlite3 {
  Database: new (file: string, callback: (error: Error | null) => void) => RawDatabase;
}

interface RawDatabase {
  all(sql: string, callback: (error: Error | null, rows: unknown[]) => void): void;
  prepare(sql: string, callback: (error: Error | null) => void): RawStatement;
  configure(option: "busyTimeout", value: number): void;
  close(callback: (error: Error | null) => void): void;
}

interface RawStatement {
  all(
    params: unknown[],
    callback: (error: Error | null, rows: Array<Record<string, unknown>>) => void,
  ): void;
  reset(callback: () => void): void;
  finalize(callback: () => void): void;
}

/**
 * Open the file on a connection of our own and create what the store needs;
 * the connection then stays open for keyed reads and writes (statementsOn), and is closed
 * if anything fails. @keyv/sqlite keeps its connection in a closure: when its
 * CREATE TABLE fails (a read-only file or folder) that connection can never
 * be closed, so every retry of a failing open would leak a file descriptor.
 * Failing here first means the adapter is only built for a usable file.
 */
async function probe(sqlite3: Sqlite3, path: string): Promise<RawDatabase> {
  const db = await new Promise<RawDatabase>((resolve, reject) => {
    const d: RawDatabase = new sqlite3.Database(path, (error) =>
      error ? reject(error) : resolve(d),
    );
  });
  try {
    db.configure("busyTimeout", BUSY_TIMEOUT_MS);
    const query: SqliteQuery = (sql) =>
      new Promise((resolve, reject) =>
        db.all(sql, (error, rows) =>
          error ? reject(error) : resolve(rows as Array<Record<string, unknown>>),
        ),
      );
    await prepare(query);
    // The same statement @keyv/sqlite runs (its default key size), so its own
    // CREATE TABLE IF NOT EXISTS finds the table and writes nothing.
    await query(
      `CREATE TABLE IF NOT EXISTS ${SQLITE_VALUES_TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT )`,
    );
    return db;
  } catch (error) {
    await closeDatabase(db);
    throw error;
  }
}

/**
 * Connection settings and the leases table. @keyv/sqlite sets no pragmas.
 * WAL lets readers run while one process writes (the default rollback journal
 * blocks them); synchronous=NORMAL is the setting WAL is designed for (durable
 * against application crashes, one fsync per checkpoint instead of per commit).
 */
async function prepare(query: SqliteQuery): Promise<void> {
  // Ask for WAL until granted: switching needs a moment of exclusive access,
  // which another process opening the same new file may hold.
  // The mode is stored in the file: most opens find it set already. Retries
  // are bounded in time, since each busy statement already waits out the
  // busy timeout (a writer holding the lock longer is an error, not a hang).
  const deadline = Date.now() + 2 * BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      const [row] = await query("PRAGMA journal_mode");
      if (String(row?.journal_mode).toLowerCase() !== "wal")
        await query("PRAGMA journal_mode = WAL");
      break;
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
    }
  }
  await query("PRAGMA synchronous = NORMAL");
  await query(
    `CREATE TABLE IF NOT EXISTS ${SQLITE_LEASES_TABLE} (
       key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL)`,
  );
}

function isBusy(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    (error.code === "SQLITE_BUSY" || error.code === "SQLITE_LOCKED")
  );
}
