/**
 * What a replay hit reads, kept beside the values on SQLite (`Store.getHit`):
 * table `invocache_hits` holds, per key, the record without the entry's
 * manifest, cut by SQLite from the value by triggers on the values' table,
 * so a hit reads a few KB from a small table instead of the whole record.
 * On turn 100 of an agent loop the record is ~400 KB; cutting the manifest
 * out on every read (`json_valid` + `json_remove`, SQLITE_HIT_FROM_VALUE)
 * cost ~0.5 ms of SQLite's time per hit. A column of the values' table
 * would not do: SQLite stores a row's columns after `value`, so reaching it
 * walks the value's overflow pages (tried: ~0.25 ms per hit once the file
 * outgrows SQLite's page cache, docs/performance.md).
 *
 * Exact by construction: the triggers run inside every statement that
 * inserts, changes or deletes a value, whoever runs it (this invocache, an
 * older one, keyv alone, another program), so the hit of a key is always
 * SQLITE_HIT_OF of its value as it now is: the text a hit without the table
 * computes on every read, or it has no hit row: a value that is not valid
 * JSON, a small record (SQLITE_HIT_MIN_SAVING), a file whose table a
 * migration is still filling. A key without a row reads its value, cut or
 * returned whole as before. Nothing a hit serves comes from anywhere but
 * the value.
 *
 * A file made before this gains the table only through `invocache
 * migrate-store` (sqlite-meta.ts's migration ends with `addSqliteHits`),
 * never behind the user's back on an open; until then hits cut the value.
 */

/** One statement with parameters, its rows (sqlite.ts's `SqliteQuery`). */
type SqliteQuery = (sql: string, ...params: unknown[]) => Promise<Array<Record<string, unknown>>>;

// sqlite.ts's SQLITE_VALUES_TABLE, spelled out (sqlite.ts imports this module).
const T = "invocache_entries";
/** The hits' table: `key` (a values' key), `hit` (its value's cut, when worth keeping). */
export const SQLITE_HITS_TABLE = "invocache_hits";
const H = SQLITE_HITS_TABLE;

/**
 * The record `v` (an SQL expression) as a hit reads it: the manifest removed
 * by SQLite itself; NULL for a text that is not valid JSON (a hit then reads
 * the value whole, so the store's own parse reports it). `json_remove`
 * renders the rest minified with strings and numbers as stored (SQLite keeps
 * their source text), and changes nothing when there is no
 * `$.value.manifest`. Whatever SQLite leaves (a duplicate `manifest` key),
 * the store drops after parsing.
 */
export function sqliteHitOf(v: string): string {
  return `CASE WHEN json_valid(${v}) THEN json_remove(${v}, '$.value.manifest') END`;
}

/** A hit's text from the value alone (no hit row): the cut, or the whole text. */
export const SQLITE_HIT_FROM_VALUE = `CASE WHEN json_valid(value) THEN json_remove(value, '$.value.manifest') ELSE value END`;

/**
 * A hit's read on a file with the hits' table: its hit row's text when it
 * has one, else the value cut as on a file without it. SQLite evaluates the
 * CASE lazily: a hit row means the value's text is never read (the values' row is found by its
 * key in the table's b-tree, its overflow pages are not touched).
 */
export const SQLITE_HIT_SELECT_TABLE = `SELECT CASE WHEN h.hit IS NOT NULL THEN h.hit ELSE ${SQLITE_HIT_FROM_VALUE} END AS value
  FROM ${T} LEFT JOIN ${H} AS h ON h.key = ${T}.key WHERE ${T}.key = ?`;

/**
 * Bytes (UTF-8) a hit must save on its value for a row to be kept: below
 * this, cutting the manifest out on the read costs little (a record of a
 * few KiB sits in one page), while a copy of nearly the whole record would
 * double the file for stores of small entries (issue 34's million-entry
 * store). An agent loop's records pass it from about its third turn.
 */
export const SQLITE_HIT_MIN_SAVING = 8192;

/**
 * The statements that give `key` the hit row of the value `v` (SQL
 * expressions), if any: its cut when `v` is valid JSON, dropped again when
 * it saves less than SQLITE_HIT_MIN_SAVING bytes (the read then cuts the
 * value). `length` of a BLOB is its size; of a TEXT, a count of its
 * characters that reads all of it. Two statements, not one SELECT with a
 * condition: SQLite substitutes a subquery's column into the outer query,
 * so a condition on the cut's length would run `json_remove` over the
 * value a second time. Together: +10% CPU on a `store.set` of the 100-turn
 * loop's entries (docs/performance.md).
 */
const writeHit = (key: string, v: string) =>
  `INSERT INTO ${H} (key, hit) SELECT ${key}, json_remove(${v}, '$.value.manifest') WHERE json_valid(${v});
   DELETE FROM ${H} WHERE key = ${key}
     AND length(CAST(${v} AS BLOB)) - length(CAST(hit AS BLOB)) < ${SQLITE_HIT_MIN_SAVING};`;

/**
 * The table and the triggers that keep it in step with the values (see the
 * module comment): every write of a value drops its key's hit row and
 * writes the new one, if any. An update of the key itself (nobody does;
 * kept exact anyway) drops the old key's. The triggers fire on changes of
 * `key` or `value` only, not on the metadata columns' own updates.
 */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${H} (key TEXT PRIMARY KEY, hit TEXT NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS invocache_hits_ins AFTER INSERT ON ${T}
     BEGIN DELETE FROM ${H} WHERE key = NEW.key; ${writeHit("NEW.key", "NEW.value")} END`,
  `CREATE TRIGGER IF NOT EXISTS invocache_hits_upd AFTER UPDATE OF key, value ON ${T}
     BEGIN DELETE FROM ${H} WHERE key IN (OLD.key, NEW.key); ${writeHit("NEW.key", "NEW.value")} END`,
  `CREATE TRIGGER IF NOT EXISTS invocache_hits_del AFTER DELETE ON ${T}
     BEGIN DELETE FROM ${H} WHERE key = OLD.key; END`,
];

/** Whether the file has the hits' table and its triggers (made before any filling). */
export async function sqliteHasHits(query: SqliteQuery): Promise<boolean> {
  const rows = await query(
    `SELECT count(*) AS n FROM sqlite_master WHERE (type = 'table' AND name = ?)
       OR (type = 'trigger' AND name IN ('invocache_hits_ins', 'invocache_hits_upd', 'invocache_hits_del'))`,
    H,
  );
  return Number(rows[0]?.n) === 4;
}

/** Rows per statement while the table is filled (each value is parsed by SQLite). */
const FILL_BATCH = 500;

/**
 * Give the file the hits' table and its triggers (nothing when it has
 * them), then fill the hit of every key that has none, a key range at a
 * time. The triggers come first: a value written meanwhile has its hit
 * written by its own statement, which the fill never overwrites (one
 * statement reads each value and writes its hit). Resolves how many hits it wrote.
 */
export async function addSqliteHits(
  query: SqliteQuery,
  onProgress?: (done: number) => void,
): Promise<number> {
  for (const statement of SCHEMA) await query(statement);
  let filled = 0;
  let after = "";
  while (true) {
    const [end] = await query(
      `SELECT key FROM ${T} WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?`,
      after,
      FILL_BATCH - 1,
    );
    const upper = end === undefined ? undefined : String(end.key);
    // The triggers' rows, for the keys that have none (a key that gains no
    // row is cut again by the next migration, and the condition may run
    // json_remove twice per value: a migration's cost only).
    const done = await query(
      `INSERT INTO ${H} (key, hit)
       SELECT key, c FROM (SELECT key, value AS v, json_remove(value, '$.value.manifest') AS c
         FROM ${T} WHERE key > ?${upper === undefined ? "" : " AND key <= ?"}
           AND NOT EXISTS (SELECT 1 FROM ${H} WHERE ${H}.key = ${T}.key) AND json_valid(value))
       WHERE length(CAST(v AS BLOB)) - length(CAST(c AS BLOB)) >= ${SQLITE_HIT_MIN_SAVING}
       ON CONFLICT(key) DO NOTHING
       RETURNING key`,
      ...(upper === undefined ? [after] : [after, upper]),
    );
    filled += done.length;
    onProgress?.(filled);
    if (upper === undefined) return filled;
    after = upper;
  }
}
