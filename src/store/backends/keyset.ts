/**
 * Keyset pagination, the one loop every SQL backend lists with: fetch the
 * page after a cursor, hand its rows on, move the cursor to the last row,
 * stop at a short page. No OFFSET rescans, and rows written meanwhile cannot
 * shift the window. The SQL (and so the order and the cursor's columns) is
 * the backend's.
 */
import type { RawRow } from "../backend.js";

/** A row as the drivers return it: `key` and `value`, plus the cursor's other columns. */
export type SqlRow = Record<string, unknown>;

/**
 * The rows of every page as `[key, value]`: `fetch(cursor)` returns up to
 * `pageSize` rows after `cursor` in the listing's order, `next(last)` the
 * cursor after a page's last row.
 *
 * @example
 * yield* keysetPages("", (after) => query(SQL, after, prefix, prefix, PAGE), (r) => String(r.key), PAGE);
 */
export async function* keysetPages<C>(
  first: C,
  fetch: (cursor: C) => Promise<readonly SqlRow[]> | readonly SqlRow[],
  next: (last: SqlRow) => C,
  pageSize: number,
): AsyncIterable<RawRow> {
  let cursor = first;
  while (true) {
    const rows = await fetch(cursor);
    for (const row of rows) yield [String(row.key), String(row.value)];
    const last = rows.at(-1);
    if (last === undefined || rows.length < pageSize) return;
    cursor = next(last);
  }
}
