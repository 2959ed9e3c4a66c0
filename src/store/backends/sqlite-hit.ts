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
 * computes on every read. A value that is not valid JSON has a NULL hit,
 * and a key without a hit row (a file whose table is still being filled by
 * a migration) reads its value; both are then cut or returned whole as
 * before. Nothing a hit serves comes from anywhere but the value.
 *
 * A file made before this gains the table only through `invocache
 * migrate-store` (sqlite-meta.ts's migration ends with `addSqliteHits`),
 * never behind the user's back on an open; until then hits cut the value.
 */

/** One statement with parameters, its rows (sqlite.ts's `SqliteQuery`). */
type SqliteQuery = (sql: string, ...params: unknown[]) => Promise<Array<Record<string, unknown>>>;

// sqlite.ts's SQLITE_VALUES_TABLE, spelled out (sqlite.ts imports this module).
const T = "invocache_entries";
/** The hits' table: `key` (a values' key), `hit` (its value's cut, or NULL). */
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

/** A hit's text from the value alone (no hit row, or a NULL one): the cut, or the whole text. */
export const SQLITE_HIT_FROM_VALUE = `CASE WHEN json_valid(value) THEN json_remove(value, '$.value.manifest') ELSE value END`;

/**
 * A hit's read on a file with the hits' table: its hit when set, else the
 * value cut as on a file without it. SQLite evaluates the CASE lazily: a
 * set hit never has the value's text read (the values' row is found by its
 * key in the table's b-tree, its overflow pages are not touched).
 */
export const SQLITE_HIT_SELECT_TABLE = `SELECT CASE WHEN h.hit IS NOT NULL THEN h.hit ELSE ${SQLITE_HIT_FROM_VALUE} END AS value
  FROM ${T} LEFT JOIN ${H} AS h ON h.key = ${T}.key WHERE ${T}.key = ?`;

const upsert = (key: string, value: string) =>
  `INSERT INTO ${H} (key, hit) VALUES (${key}, ${sqliteHitOf(value)})
     ON CONFLICT(key) DO UPDATE SET hit = excluded.hit;`;

/**
 * The table and the triggers that keep it in step with the values (see the
 * module comment). An update of the key itself (nobody does; kept exact
 * anyway) moves the hit. The triggers fire on changes of `key` or `value`
 * only, not on the metadata columns' own updates.
 */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${H} (key TEXT PRIMARY KEY, hit TEXT)`,
  `CREATE TRIGGER IF NOT EXISTS invocache_hits_ins AFTER INSERT ON ${T}
     BEGIN ${upsert("NEW.key", "NEW.value")} END`,
  `CREATE TRIGGER IF NOT EXISTS invocache_hits_upd AFTER UPDATE OF key, value ON ${T}
     BEGIN DELETE FROM ${H} WHERE key = OLD.key AND OLD.key IS NOT NEW.key;
       ${upsert("NEW.key", "NEW.value")} END`,
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
    const done = await query(
      `INSERT INTO ${H} (key, hit)
       SELECT key, ${sqliteHitOf("value")} FROM ${T}
       WHERE key > ?${upper === undefined ? "" : " AND key <= ?"}
         AND NOT EXISTS (SELECT 1 FROM ${H} WHERE ${H}.key = ${T}.key)
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
