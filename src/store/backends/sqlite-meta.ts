/**
 * Stored metadata on SQLite (src/store/meta.ts): three columns on keyv's own
 * table, written by the same fenced INSERT as the value, so the row and its
 * metadata change in one statement:
 *
 * - `m_meta`: the metadata as JSON (`encodeMeta`), NULL when the row has none;
 * - `m_at`: the entry's recordedAt ("" for a problem row, NULL for others), the time order;
 * - `m_rev`: bumped by every write that sets the metadata. A write that
 *   changes `value` but not `m_rev` (an older invocache, or anyone writing
 *   through keyv alone) clears the metadata (trigger `invocache_meta_stale`),
 *   so stale metadata is never served: the row counts as missing instead.
 *
 * Indexes: SQLite stores a row's columns after `value`, so reading `m_meta`
 * from the table walks the value's overflow pages; the two covering indexes
 * answer listings from the index alone. A partial index finds rows without
 * metadata at once.
 *
 * A file made before this gains the columns only through `migrateSqliteMeta`
 * (`invocache migrate-store`): building the indexes reads the whole table,
 * which is not done behind the user's back on an open. Until then writes
 * keep the old layout and `listMeta` reports the store as not migrated.
 */
import { StoreError } from "../../errors.js";
import type { RawRow } from "../backend.js";
import { deserializeRecord } from "../json.js";
import {
  decodeMeta,
  encodeMeta,
  type MetaQuery,
  metaMatches,
  type StoredMeta,
  storedMetaOf,
} from "../meta.js";
import { META_COLUMN_NAMES, META_COLUMNS, metaColumnValues } from "./sql-meta-columns.js";
import { SQLITE_DIALECT } from "./sql-meta-stats.js";
import {
  SQLITE_SUMMARY_FILL,
  SQLITE_SUMMARY_INDEXES,
  SQLITE_SUMMARY_TABLES,
} from "./sql-meta-summary.js";
import { addSqliteHits } from "./sqlite-hit.js";

/** One statement with parameters, its rows (sqlite.ts's `SqliteQuery`; both drivers give one). */
type SqliteQuery = (sql: string, ...params: unknown[]) => Promise<Array<Record<string, unknown>>>;

// sqlite.ts's SQLITE_VALUES_TABLE and SQLITE_NOW_MS, spelled out: sqlite.ts
// imports this module, and a value imported back would not exist yet while
// this one loads.
const T = "invocache_entries";
const SQLITE_NOW_MS = "((julianday('now') - 2440587.5) * 86400000.0)";
/** Rows per page while listing metadata (a few hundred bytes each). */
const META_PAGE = 500;
/**
 * Rows recorded before a time up to which a key-order listing of them is
 * read from the time index and sorted (each page sorts them all again).
 */
const FEW_BEFORE = 10_000;
/** Rows per statement of a migration (4 parameters each, under SQLite's parameter limit). */
const MIGRATE_BATCH = 200;

/** The fenced write of a value and its metadata (parameters: key, value, m_meta, m_at, notAfter). */
export const SQLITE_FENCED_SET_META = `INSERT INTO ${T} (key, value, m_meta, m_at, m_rev)
  SELECT ?, ?, ?, ?, 1 WHERE ${SQLITE_NOW_MS} <= ?
  ON CONFLICT(key) DO UPDATE SET value = excluded.value, m_meta = excluded.m_meta,
    m_at = excluded.m_at, m_rev = coalesce(${T}.m_rev, 0) + 1 RETURNING key`;

/**
 * Which metadata a file keeps: none (made before stored metadata), `m_meta`
 * alone (made before the metadata columns, sql-meta-columns.ts), or both.
 */
export type SqliteMetaLayout = "none" | "meta" | "cols";

/**
 * The fenced write of a value, its metadata and the metadata's columns
 * (parameters: key, value, m_meta, m_at, the columns of sql-meta-columns.ts, notAfter).
 * `m_cols` is set to the row's new `m_rev`: the columns are this write's.
 */
export const SQLITE_FENCED_SET_COLS = `INSERT INTO ${T} (key, value, m_meta, m_at, m_rev, m_cols, ${META_COLUMN_NAMES})
  SELECT ?, ?, ?, ?, 1, 1, ${META_COLUMNS.map(() => "?").join(", ")} WHERE ${SQLITE_NOW_MS} <= ?
  ON CONFLICT(key) DO UPDATE SET value = excluded.value, m_meta = excluded.m_meta,
    m_at = excluded.m_at, m_rev = coalesce(${T}.m_rev, 0) + 1, m_cols = coalesce(${T}.m_rev, 0) + 1,
    ${META_COLUMNS.map((c) => `${c.name} = excluded.${c.name}`).join(", ")} RETURNING key`;

/** The fenced write of `layout` ("meta" or "cols"). */
export function sqliteFencedSetMeta(layout: SqliteMetaLayout): string {
  return layout === "cols" ? SQLITE_FENCED_SET_COLS : SQLITE_FENCED_SET_META;
}

const SQLITE_TYPE = { text: "TEXT", num: "REAL", int: "INTEGER" } as const;
const COLUMNS = ["m_cols INTEGER", ...META_COLUMNS.map((c) => `${c.name} ${SQLITE_TYPE[c.type]}`)];

/**
 * The columns' own index and trigger, made after they are filled: the
 * index covers what `stats` reads (in key order, as it pages); the trigger
 * clears `m_cols` where `invocache_meta_stale` clears `m_meta` (a second
 * trigger, so a file migrated before keeps its first one untouched).
 */
const COLS_SCHEMA = [
  `CREATE TRIGGER IF NOT EXISTS invocache_meta_cols_stale AFTER UPDATE OF value ON ${T}
     WHEN NEW.m_rev IS OLD.m_rev
     BEGIN UPDATE ${T} SET m_cols = NULL WHERE key = NEW.key; END`,
  `CREATE INDEX IF NOT EXISTS invocache_meta_cols ON ${T} (key, m_cols, m_rev, ${META_COLUMN_NAMES}, m_at)`,
];
/** Rows per statement while the columns are filled from `m_meta`. */
const FILL_BATCH = 5000;

const SCHEMA = [
  `CREATE INDEX IF NOT EXISTS invocache_meta_key ON ${T} (key, m_meta)`,
  `CREATE INDEX IF NOT EXISTS invocache_meta_at ON ${T} (m_at, key, m_meta) WHERE m_at IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS invocache_meta_missing ON ${T} (key) WHERE m_meta IS NULL`,
  `CREATE TRIGGER IF NOT EXISTS invocache_meta_stale AFTER UPDATE OF value ON ${T}
     WHEN NEW.m_rev IS OLD.m_rev
     BEGIN UPDATE ${T} SET m_meta = NULL, m_at = NULL WHERE key = NEW.key; END`,
];
const INDEXES = ["invocache_meta_key", "invocache_meta_at", "invocache_meta_missing"];

/** Whether the table has the columns of sql-meta-columns.ts. */
async function sqliteHasColumns(query: SqliteQuery): Promise<boolean> {
  const columns = await query(`PRAGMA table_info(${T})`);
  return columns.some((c) => c.name === "m_cols");
}

/** Whether the columns are filled and indexed (the index is made last). */
async function sqliteHasColumnsIndex(query: SqliteQuery): Promise<boolean> {
  const [row] = await query(
    `SELECT 1 AS one FROM sqlite_master WHERE type = 'index' AND name = 'invocache_meta_cols'`,
  );
  return row !== undefined;
}

/** Whether the table has the metadata columns. */
export async function sqliteHasMetaColumns(query: SqliteQuery): Promise<boolean> {
  const columns = await query(`PRAGMA table_info(${T})`);
  return columns.some((c) => c.name === "m_meta");
}

/**
 * On a read-write open: give an empty table the metadata layout (instant),
 * leave a table that has rows as it is (see the header). Resolves whether
 * writes should carry metadata.
 */
export async function prepareSqliteMeta(query: SqliteQuery): Promise<SqliteMetaLayout> {
  // @keyv/sqlite's own statement (sqlite.ts's probe): its table may not be made yet (":memory:").
  await query(`CREATE TABLE IF NOT EXISTS ${T}(key VARCHAR(255) PRIMARY KEY, value TEXT )`);
  if (await sqliteHasMetaColumns(query)) {
    // Columns added by a migration still under way are written too: those rows need no filling.
    return (await sqliteHasColumns(query)) ? "cols" : "meta";
  }
  const [row] = await query(`SELECT 1 AS one FROM ${T} LIMIT 1`);
  if (row !== undefined) return "none";
  await addMetaSchema(query);
  return "cols";
}

async function addColumns(query: SqliteQuery, columns: readonly string[]): Promise<void> {
  for (const column of columns) {
    try {
      await query(`ALTER TABLE ${T} ADD COLUMN ${column}`);
    } catch (error) {
      // Another process opening the same new file added it first.
      if (!/duplicate column name/i.test(String((error as Error).message))) throw error;
    }
  }
}

async function addMetaSchema(query: SqliteQuery): Promise<void> {
  await addColumns(query, ["m_meta TEXT", "m_at TEXT", "m_rev INTEGER", ...COLUMNS]);
  for (const statement of [...SCHEMA, ...COLS_SCHEMA]) await query(statement);
  // An empty table: its summary is empty, nothing to fill; nor are its hits.
  for (const statement of [...SQLITE_SUMMARY_TABLES, ...SQLITE_SUMMARY_INDEXES]) {
    await query(statement);
  }
  await addSqliteHits(query);
}

/**
 * Give a migrated table the stats summary (sql-meta-summary.ts): triggers,
 * the sums of the rows there are, the indexes; in one write transaction, so
 * no write falls between the fill and the triggers. Nothing when it has one.
 */
async function addSqliteSummary(query: SqliteQuery): Promise<void> {
  const [ready] = await query(
    `SELECT 1 AS one FROM sqlite_master WHERE type = 'index' AND name = 'invocache_stats_live'`,
  );
  if (ready !== undefined) return;
  await query("BEGIN IMMEDIATE");
  try {
    for (const statement of [
      ...SQLITE_SUMMARY_TABLES,
      ...SQLITE_SUMMARY_FILL,
      ...SQLITE_SUMMARY_INDEXES,
    ]) {
      await query(statement);
    }
    await query("COMMIT");
  } catch (error) {
    await query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/**
 * The parameters of `sqliteFencedSetMeta(layout)` after key and value:
 * m_meta, m_at, and on "cols" the columns' values.
 */
export function sqliteMetaParams(
  meta: StoredMeta,
  layout: SqliteMetaLayout = "meta",
): Array<string | number | null> {
  // Problems sort first in the time order (sqlite-meta.ts's m_at): "" before every time.
  const at = meta.kind === "entry" ? meta.recordedAt! : meta.kind === "problem" ? "" : null;
  const params = [encodeMeta(meta), at];
  return layout === "cols" ? [...params, ...metaColumnValues(meta)] : params;
}

/**
 * Why `listMeta` cannot answer yet, or undefined when every row has its
 * metadata: columns or indexes absent (never migrated, or a migration cut
 * short), or rows written without it (by an older invocache).
 */
export async function sqliteMetaMissing(query: SqliteQuery): Promise<string | undefined> {
  if (!(await sqliteHasMetaColumns(query))) return "it was created before stored metadata";
  const found = await query(
    `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`,
    T,
  );
  const names = new Set(found.map((r) => String(r.name)));
  if (!INDEXES.every((n) => names.has(n))) return "its metadata indexes are incomplete";
  const [row] = await query(
    `SELECT key FROM ${T} INDEXED BY invocache_meta_missing WHERE m_meta IS NULL LIMIT 1`,
  );
  if (row !== undefined) {
    return `some rows were written without metadata (by an older invocache?), e.g. ${JSON.stringify(String(row.key))}`;
  }
  return undefined;
}

/**
 * The stored metadata matching `query`, a page at a time from the covering
 * indexes (never the values). Expired rows are included (the store filters).
 */
export async function* listSqliteMeta(query: SqliteQuery, q: MetaQuery): AsyncIterable<StoredMeta> {
  const prefix = q.prefix ?? "";
  const order = q.order ?? "key";
  let left = q.limit ?? Number.POSITIVE_INFINITY;
  let after = q.after;
  // Entries recorded before a time, in key order (prune's dry run): the
  // columns' index holds m_at, so the rows that do not match are passed
  // over there and only the matches' metadata is read from the table.
  const narrowed =
    order === "key" && q.recordedBefore !== undefined && (await sqliteHasColumnsIndex(query));
  // Few such rows (a bounded count on the time index): each page is read
  // from the time index's range and sorted by key, so the rest of the
  // store is never walked; many: the columns' index in key order, as before.
  const few =
    narrowed &&
    Number(
      (
        await query(
          `SELECT count(*) AS n FROM (SELECT 1 FROM ${T} INDEXED BY invocache_meta_at
           WHERE m_at IS NOT NULL AND m_at < ? LIMIT ${FEW_BEFORE + 1})`,
          q.recordedBefore,
        )
      )[0]?.n,
    ) <= FEW_BEFORE;
  while (left > 0) {
    const page = Math.min(META_PAGE, left);
    let rows: Array<Record<string, unknown>>;
    if (narrowed) {
      rows = await query(
        `SELECT key, m_meta FROM ${T} INDEXED BY ${few ? "invocache_meta_at" : "invocache_meta_cols"}
         WHERE ${few ? "m_at IS NOT NULL AND " : ""}key > ? AND substr(key, 1, length(?)) = ? AND m_at < ? ORDER BY key LIMIT ?`,
        after?.key ?? "",
        prefix,
        prefix,
        q.recordedBefore,
        page,
      );
    } else if (order === "key") {
      rows = await query(
        `SELECT key, m_meta FROM ${T} INDEXED BY invocache_meta_key
         WHERE key > ? AND substr(key, 1, length(?)) = ? ORDER BY key LIMIT ?`,
        after?.key ?? "",
        prefix,
        prefix,
        page,
      );
    } else {
      const desc = order === "recordedAtDesc";
      const where = ["m_at IS NOT NULL", "substr(key, 1, length(?)) = ?"];
      const params: unknown[] = [prefix, prefix];
      if (q.recordedBefore !== undefined) {
        where.push("m_at < ?");
        params.push(q.recordedBefore);
      }
      if (after !== undefined) {
        where.push(desc ? "(m_at, key) < (?, ?)" : "(m_at, key) > (?, ?)");
        params.push(after.recordedAt ?? "", after.key);
      }
      rows = await query(
        `SELECT key, m_meta FROM ${T} INDEXED BY invocache_meta_at WHERE ${where.join(" AND ")}
         ORDER BY m_at ${desc ? "DESC" : "ASC"}, key ${desc ? "DESC" : "ASC"} LIMIT ?`,
        ...params,
        page,
      );
    }
    for (const row of rows) {
      const key = String(row.key);
      const meta = row.m_meta == null ? undefined : decodeMeta(key, String(row.m_meta));
      if (meta === undefined) {
        // Cleared or rewritten under us since the missing-check: not served stale.
        throw new StoreError(
          "",
          "listMeta",
          `the metadata of ${key} is missing (written meanwhile by an older invocache?); run \`invocache migrate-store\``,
        );
      }
      if (!metaMatches(meta, q)) continue;
      yield meta;
      left--;
      if (left === 0) return;
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < page) return;
    const lastMeta = decodeMeta(String(last.key), String(last.m_meta));
    after = { key: String(last.key), recordedAt: lastMeta?.recordedAt ?? "" };
  }
}

/**
 * Give every row of an existing table its metadata: add the columns, fill
 * them a batch at a time (each row only if its value is still the one read:
 * a value rewritten meanwhile got its metadata from its writer), then build
 * the indexes and the trigger. Safe to run again, and while other processes
 * read and write the store. Resolves how many rows it filled.
 */
export async function migrateSqliteMeta(
  query: SqliteQuery,
  onProgress?: (done: number) => void,
): Promise<number> {
  if (!(await sqliteHasMetaColumns(query))) {
    await addColumns(query, ["m_meta TEXT", "m_at TEXT", "m_rev INTEGER"]);
  }
  // Before any filling: writers from here on write the columns too.
  if (!(await sqliteHasColumns(query))) await addColumns(query, COLUMNS);
  let filled = 0;
  let after = "";
  while (true) {
    const rows: RawRow[] = (
      await query(
        `SELECT key, value FROM ${T} WHERE key > ? ORDER BY key LIMIT ?`,
        after,
        MIGRATE_BATCH,
      )
    ).map((r) => [String(r.key), String(r.value)]);
    // One statement per batch (one commit, not one per row), each row still
    // filled only if its value is the one read and it has no metadata yet.
    const values: unknown[] = [];
    for (const [key, text] of rows) {
      after = key;
      let meta: StoredMeta;
      try {
        const record = deserializeRecord(text);
        meta = storedMetaOf(
          key,
          record.value,
          typeof record.expires === "number" ? record.expires : undefined,
        );
      } catch (error) {
        // Not a record we wrote: reported by the listing like a malformed entry.
        meta = { key, kind: "problem", bytes: Buffer.byteLength(text), problem: String(error) };
      }
      values.push(...sqliteMetaParams(meta), key, text);
    }
    if (rows.length > 0) {
      const done = await query(
        `UPDATE ${T} SET m_meta = v.column1, m_at = v.column2, m_rev = coalesce(${T}.m_rev, 0) + 1
         FROM (VALUES ${rows.map(() => "(?, ?, ?, ?)").join(", ")}) AS v
         WHERE ${T}.key = v.column3 AND ${T}.value = v.column4 AND ${T}.m_meta IS NULL
         RETURNING ${T}.key`,
        ...values,
      );
      filled += done.length;
    }
    onProgress?.(filled);
    if (rows.length < MIGRATE_BATCH) break;
  }
  for (const statement of SCHEMA) await query(statement);
  // Every row with metadata gains its columns (those just filled above too):
  // the count of rows given anything.
  const cols = await fillSqliteColumns(query, (done) => onProgress?.(done));
  for (const statement of COLS_SCHEMA) await query(statement);
  await addSqliteSummary(query);
  // Last: what a hit reads, beside the values (sqlite-hit.ts). Not counted:
  // `filled` says which rows gained metadata.
  await addSqliteHits(query);
  return cols;
}

/**
 * Fill the columns from `m_meta`, in SQL, a key range at a time, on every
 * row whose columns are not its metadata's (`m_cols` is not `m_rev`): the
 * same expressions the stats statement falls back on. One statement reads
 * and writes each row, so a row rewritten meanwhile is filled from what
 * its writer wrote (or was written with its columns). Resolves how many rows it filled.
 */
async function fillSqliteColumns(
  query: SqliteQuery,
  onProgress: (done: number) => void,
): Promise<number> {
  const set = META_COLUMNS.map((c) => `${c.name} = ${c.json(SQLITE_DIALECT)}`).join(",\n    ");
  let filled = 0;
  let after = "";
  while (true) {
    const [end] = await query(
      `SELECT key FROM ${T} WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?`,
      after,
      FILL_BATCH - 1,
    );
    const upper = end === undefined ? undefined : String(end.key);
    const done = await query(
      `UPDATE ${T} SET ${set}, m_cols = ${T}.m_rev
       FROM (SELECT key AS k, m_meta AS m FROM ${T}
         WHERE key > ?${upper === undefined ? "" : " AND key <= ?"}) AS s
       WHERE ${T}.key = s.k AND s.m IS NOT NULL AND ${T}.m_cols IS NOT ${T}.m_rev
         AND ${SQLITE_DIALECT.int(["mv"])} = 1
       RETURNING ${T}.key`,
      ...(upper === undefined ? [after] : [after, upper]),
    );
    filled += done.length;
    onProgress(filled);
    if (upper === undefined) return filled;
    after = upper;
  }
}
