/**
 * A store that sorts listings in its database (`Store.listByRecordedAt`)
 * may find the database unwilling at run time: PostgreSQL refuses the
 * sort's temp table on a hot standby or to a role without the TEMPORARY
 * privilege. The backend marks that error with this code, so a caller can
 * fall back to sorting itself (what `invocache ls` did before the store
 * could sort) instead of failing a listing that worked before.
 */
export const SORT_REFUSED = "ERR_INVOCACHE_SORT_REFUSED";

/** Is `error`, or any error in its `cause` chain, the database refusing the sort? */
export function isSortRefused(error: unknown): boolean {
  for (let e = error, depth = 0; e !== null && typeof e === "object" && depth < 16; depth++) {
    if ((e as { code?: unknown }).code === SORT_REFUSED) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
