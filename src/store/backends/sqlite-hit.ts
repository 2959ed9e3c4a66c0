/**
 * What a replay hit reads, kept beside the value on SQLite (`Store.getHit`):
 * column `m_hit` holds the record without the entry's manifest, computed by
 * SQLite from the value in the statement that writes the value (one
 * statement: the two can never disagree), so a hit reads a few KB instead of
 * the whole record. On turn 100 of an agent loop the record is ~400 KB, and
 * cutting the manifest out on every read (`json_valid` + `json_remove`, see
 * SQLITE_HIT_FROM_VALUE) cost ~0.5 ms of SQLite's time per hit against
 * ~0.07 ms to read the column.
 *
 * Exact by construction: `m_hit` is SQLITE_HIT_FROM_VALUE of the value as
 * written (the expression a hit without the column runs on every read), or
 * NULL, and a hit reads it only when it is not NULL; otherwise the value is
 * cut as before. Writers that change the value without writing `m_hit`
 * (an older invocache, keyv alone) leave it as it was: the trigger
 * `invocache_hit_stale` sets it to NULL in their statement, so a hit never
 * reads the text of another value. A writer that writes `m_hit` anew and
 * happens to write the same text as before is cleared too (its value
 * changed while its cut did not): a NULL costs the fallback read, never a
 * wrong answer.
 *
 * A file made before this gains the column only through `invocache
 * migrate-store` (sqlite-meta.ts's migration ends with `addSqliteHitColumn`),
 * never behind the user's back on an open; until then hits cut the value.
 */

/** One statement with parameters, its rows (sqlite.ts's `SqliteQuery`). */
type SqliteQuery = (sql: string, ...params: unknown[]) => Promise<Array<Record<string, unknown>>>;

// sqlite.ts's SQLITE_VALUES_TABLE, spelled out (sqlite.ts imports this module).
const T = "invocache_entries";

/** The column, as `ALTER TABLE … ADD COLUMN` takes it. */
export const SQLITE_HIT_COLUMN = "m_hit TEXT";

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

/** A hit's text from the value alone (no `m_hit`, or a NULL one): the cut, or the whole text. */
export const SQLITE_HIT_FROM_VALUE = `CASE WHEN json_valid(value) THEN json_remove(value, '$.value.manifest') ELSE value END`;

/**
 * A hit's read on a file with the column: `m_hit` when set, else the value
 * cut as on a file without it. SQLite evaluates the CASE lazily: a set
 * `m_hit` never has the value's text read or parsed (the row's overflow
 * pages are walked to reach the column, not copied).
 */
export const SQLITE_HIT_SELECT_COLUMN = `SELECT CASE WHEN m_hit IS NOT NULL THEN m_hit ELSE ${SQLITE_HIT_FROM_VALUE} END AS value FROM ${T} WHERE key = ?`;

/**
 * Clears `m_hit` in the statement of any write that changed the value
 * without giving it a new `m_hit` (see the module comment).
 */
const HIT_TRIGGER = `CREATE TRIGGER IF NOT EXISTS invocache_hit_stale AFTER UPDATE OF value ON ${T}
     WHEN NEW.m_hit IS NOT NULL AND NEW.m_hit IS OLD.m_hit AND NEW.value IS NOT OLD.value
     BEGIN UPDATE ${T} SET m_hit = NULL WHERE key = NEW.key; END`;

/**
 * A fenced write statement (sqlite-meta.ts's `INSERT INTO T (key, value, …)
 * SELECT ?, ?, … WHERE … ON CONFLICT(key) DO UPDATE SET value =
 * excluded.value, …`) that also writes `m_hit`, with the same parameters in
 * the same order: key and value are named once in a CTE so the value can be
 * both stored and cut.
 */
export function withHitColumn(statement: string): string {
  const insert = `INSERT INTO ${T} (key, value, `;
  const select = "SELECT ?, ?, ";
  const update = "DO UPDATE SET value = excluded.value, ";
  if (!statement.startsWith(insert) || !statement.includes(select) || !statement.includes(update))
    throw new Error("sqlite-hit: not a fenced write of the expected shape");
  const where = statement.indexOf(" WHERE ", statement.indexOf(select));
  return `WITH w(k, v) AS (SELECT ?, ?) ${insert}m_hit, ${statement
    .slice(insert.length, where)
    .replace(select, `SELECT k, v, ${sqliteHitOf("v")}, `)} FROM w${statement
    .slice(where)
    .replace(update, `${update}m_hit = excluded.m_hit, `)}`;
}

/** Whether the table has the column. */
export async function sqliteHasHitColumn(query: SqliteQuery): Promise<boolean> {
  const columns = await query(`PRAGMA table_info(${T})`);
  return columns.some((c) => c.name === "m_hit");
}

/** Rows per statement while the column is filled (each row's value is parsed by SQLite). */
const FILL_BATCH = 500;

/**
 * Give the table the column and its trigger (nothing when it has them), then
 * fill it on every row where it is NULL, a key range at a time. One
 * statement reads and writes each row, so a row rewritten meanwhile is
 * filled from what its writer wrote. Resolves how many rows it filled (a
 * value that is not valid JSON keeps NULL: its hits read it whole).
 */
export async function addSqliteHitColumn(
  query: SqliteQuery,
  onProgress?: (done: number) => void,
): Promise<number> {
  if (!(await sqliteHasHitColumn(query))) {
    try {
      await query(`ALTER TABLE ${T} ADD COLUMN ${SQLITE_HIT_COLUMN}`);
    } catch (error) {
      // Another process migrating the same file added it first.
      if (!/duplicate column name/i.test(String((error as Error).message))) throw error;
    }
  }
  // Before any filling: a write by a writer that does not know the column clears it from here on.
  await query(HIT_TRIGGER);
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
      `UPDATE ${T} SET m_hit = ${sqliteHitOf("value")}
       WHERE key > ?${upper === undefined ? "" : " AND key <= ?"} AND m_hit IS NULL
         AND json_valid(value)
       RETURNING key`,
      ...(upper === undefined ? [after] : [after, upper]),
    );
    filled += done.length;
    onProgress?.(filled);
    if (upper === undefined) return filled;
    after = upper;
  }
}
