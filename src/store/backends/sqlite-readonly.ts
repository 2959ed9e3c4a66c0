/**
 * `sqlite://path` opened read-only (`openStore(url, { readOnly: true })`):
 * what the CLI's inspecting commands use, so a store the user may read but
 * not write can still be listed, and a missing file is reported instead of
 * created. Reads only: nothing is created, no pragma is set, no table made.
 */
import { EventEmitter } from "node:events";
import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import type { KeyvStoreAdapter } from "keyv";
import type { Backend, RawRow } from "../backend.js";
import { keysetPages } from "./keyset.js";
import { createKeyv } from "./keyv.js";
import { statsSqliteMeta } from "./sql-meta-stats.js";
import { listSqliteRows, SQLITE_VALUES_TABLE } from "./sqlite.js";
import { listSqliteMeta, sqliteMetaMissing } from "./sqlite-meta.js";

const BUSY_TIMEOUT_MS = 5000;
const PAGE = 64;
/** Rows of the store read per step while building the order (one statement each). */
const ORDER_CHUNK = 5000;
/** Names the temp tables of listings running at once on this connection. */
let orders = 0;

interface RawDatabase {
  all(
    sql: string,
    params: unknown[],
    callback: (error: Error | null, rows: unknown[]) => void,
  ): void;
  configure(option: "busyTimeout", value: number): void;
  close(callback: (error: Error | null) => void): void;
}

interface Sqlite3 {
  OPEN_READONLY: number;
  OPEN_URI: number;
  Database: new (
    file: string,
    mode: number,
    callback: (error: Error | null) => void,
  ) => RawDatabase;
}

type Rows = Array<Record<string, unknown>>;

/**
 * Open the existing SQLite file at `path` for reading.
 *
 * @throws Error with code `ENOENT` when the file does not exist (nothing is
 *   created), or SQLite's own error when it cannot be opened.
 * @example
 * const backend = await createReadOnlySqliteBackend("/app/.invocache/cache.sqlite");
 */
export async function createReadOnlySqliteBackend(path: string): Promise<Backend> {
  if (path === ":memory:") {
    throw new Error("an in-memory SQLite database cannot be opened read-only: it would be empty");
  }
  // stat first: SQLite's CANTOPEN says neither "missing" nor "permission denied".
  const info = await stat(path);
  if (info.isDirectory()) {
    throw Object.assign(new Error(`${path} is a directory, not a SQLite file`), { code: "EISDIR" });
  }
  const fromAdapter = createRequire(createRequire(import.meta.url).resolve("@keyv/sqlite"));
  const sqlite3 = fromAdapter("sqlite3") as Sqlite3;
  const db = await openReadOnly(sqlite3, path);
  const query = (sql: string, ...params: unknown[]) =>
    new Promise<Rows>((resolve, reject) =>
      db.all(sql, params, (error, rows) => (error ? reject(error) : resolve(rows as Rows))),
    );
  const refuse = async (): Promise<never> => {
    throw new Error("the store was opened read-only");
  };
  // A keyv adapter over the read-only connection: gets work, writes refuse.
  const adapter = Object.assign(new EventEmitter(), {
    opts: { dialect: "sqlite" },
    namespace: undefined,
    async get(key: string) {
      const [row] = await query(`SELECT value FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`, key);
      return row === undefined ? undefined : row.value;
    },
    set: refuse,
    delete: refuse,
    clear: refuse,
    // cast: keyv calls only get/set/delete/clear (and the emitter) on an
    // adapter; the full KeyvStoreAdapter type also names batch methods it
    // falls back from when absent.
  }) as unknown as KeyvStoreAdapter;
  return {
    keyv: await createKeyv(adapter),
    keyPrefix: "",
    listRaw: (prefix) => listSqliteRows(query, prefix),
    // Stored metadata is read as it is; a file without it is reported, never migrated here.
    metaMissing: () => sqliteMetaMissing(query),
    listMeta: (q) => listSqliteMeta(query, q),
    statsMeta: (q, now, onProgress) => statsSqliteMeta(query, q, now, onProgress),
    async *listRawByRecordedAt(prefix: string): AsyncIterable<RawRow | null> {
      // The order is built in a TEMP table (the connection's own temp
      // database: allowed on a read-only file, kept by SQLite in its page
      // cache and temp files, not in JS): (recordedAt, key) of every row,
      // read in chunks of keys so no statement runs long, then paged out
      // joined with the values. Rows written after the build are not seen;
      // rows deleted meanwhile drop out of the join.
      const order = `temp.invocache_order_${++orders}`;
      await query(`CREATE TABLE ${order} (at TEXT NOT NULL, key TEXT NOT NULL,
        PRIMARY KEY (at, key)) WITHOUT ROWID`);
      try {
        let after = "";
        while (true) {
          // The chunk's last key from the key index alone, then its rows.
          const [chunk] = await query(
            `SELECT max(key) AS last, count(*) AS n FROM (
               SELECT key FROM ${SQLITE_VALUES_TABLE}
               WHERE key > ? AND substr(key, 1, length(?)) = ?
               ORDER BY key LIMIT ?)`,
            after,
            prefix,
            prefix,
            ORDER_CHUNK,
          );
          const n = Number(chunk?.n ?? 0);
          if (n === 0) break;
          const last = String(chunk!.last);
          // json_valid first: json_extract fails the statement on a corrupt
          // value (the listing then reports it by key, as for listRaw).
          await query(
            `INSERT INTO ${order} (at, key)
             SELECT coalesce(CASE WHEN json_valid(value)
               THEN json_extract(value, '$.value.meta.recordedAt') END, ''), key
             FROM ${SQLITE_VALUES_TABLE}
             WHERE key > ? AND key <= ? AND substr(key, 1, length(?)) = ?`,
            after,
            last,
            prefix,
            prefix,
          );
          if (n < ORDER_CHUNK) break;
          after = last;
          yield null;
        }
        yield* keysetPages(
          ["", ""],
          ([at, key]) =>
            query(
              `SELECT o.at AS at, o.key AS key, t.value AS value
               FROM ${order} o JOIN ${SQLITE_VALUES_TABLE} t ON t.key = o.key
               WHERE (o.at, o.key) > (?, ?) ORDER BY o.at, o.key LIMIT ?`,
              at,
              key,
              PAGE,
            ),
          (last) => [String(last.at), String(last.key)],
          PAGE,
        );
      } finally {
        await query(`DROP TABLE IF EXISTS ${order}`).catch(() => {});
      }
    },
    async getRecord(key) {
      const [row] = await query(`SELECT value FROM ${SQLITE_VALUES_TABLE} WHERE key = ?`, key);
      return row === undefined ? undefined : String(row.value);
    },
    deleteRecordIf: refuse,
    acquireLease: refuse,
    releaseLease: refuse,
    async close() {
      await new Promise<void>((resolve, reject) =>
        db.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/**
 * Open read-only. A WAL database needs its `-shm` file: when it does not
 * exist and cannot be created (a folder the user may not write), SQLite
 * refuses (CANTOPEN or READONLY); the file is then opened as immutable, which needs neither (and
 * takes no locks, so a writer at the same moment may go unseen: fine for a
 * look at a store nobody can write anyway).
 */
async function openReadOnly(sqlite3: Sqlite3, path: string): Promise<RawDatabase> {
  try {
    return await openChecked(sqlite3, path, sqlite3.OPEN_READONLY);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== "SQLITE_CANTOPEN" && code !== "SQLITE_READONLY") throw noTable(error);
  }
  const uri = `file:${encodeURI(path).replace(/[?#]/g, encodeURIComponent)}?mode=ro&immutable=1`;
  try {
    return await openChecked(sqlite3, uri, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI);
  } catch (error) {
    throw noTable(error);
  }
}

/** Open `file` and read from the values table once (SQLite opens lazily); closed on failure. */
async function openChecked(sqlite3: Sqlite3, file: string, mode: number): Promise<RawDatabase> {
  const db = await new Promise<RawDatabase>((resolve, reject) => {
    const d: RawDatabase = new sqlite3.Database(file, mode, (error) =>
      error ? reject(error) : resolve(d),
    );
  });
  try {
    db.configure("busyTimeout", BUSY_TIMEOUT_MS);
    await new Promise<void>((resolve, reject) =>
      db.all(`SELECT 1 FROM ${SQLITE_VALUES_TABLE} LIMIT 1`, [], (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    return db;
  } catch (error) {
    await new Promise<void>((resolve) => db.close(() => resolve()));
    throw error;
  }
}

/** "no such table" means the file is some other SQLite database. */
function noTable(error: unknown): unknown {
  if (/no such table/.test(String((error as Error)?.message))) {
    return Object.assign(
      new Error(`it is a SQLite file but not an invocache store (no ${SQLITE_VALUES_TABLE} table)`),
      { cause: error },
    );
  }
  return error;
}
