/**
 * How old an entry is: the duration syntax of `maxAge` and the test "was
 * this entry recorded longer ago than that?". Facts about the entry schema
 * only (its `meta.recordedAt`); what to do with a stale entry is replay
 * policy, and lives in the recorder (src/recorder/staleness.ts).
 */

/**
 * What the recorder does with an entry older than `maxAge`:
 *
 * - `warn` (default): served, and reported once per entry.
 * - `error`: reading it is a `StaleEntryError` (the test fails; re-record it).
 * - `rerecord`: treated as absent, so `auto`/`record` modes record it anew
 *   (in `replay` mode that is a miss, whose message says how to re-record).
 */
export type OnStale = "warn" | "error" | "rerecord";

/** The accepted {@link OnStale} values, for option checks. */
export const ON_STALE: readonly OnStale[] = ["warn", "error", "rerecord"];

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * `maxAge` as milliseconds: a positive number of ms, or a string such as
 * `"90d"`, `"12h"`, `"30m"`, `"45s"`, `"500ms"`, `"2w"`.
 *
 * @throws RangeError naming `maxAge` for anything else.
 * @example
 * parseMaxAge("30d") // 2_592_000_000
 * parseMaxAge(60_000) // 60_000
 */
export function parseMaxAge(maxAge: number | string): number {
  if (typeof maxAge === "number" && Number.isFinite(maxAge) && maxAge > 0) return maxAge;
  if (typeof maxAge === "string") {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(maxAge);
    if (m !== null && Number(m[1]) > 0) return Number(m[1]) * UNITS[m[2]!]!;
  }
  throw new RangeError(
    `maxAge must be a positive number of milliseconds or a duration such as "30d", "12h", "45s"; got ${JSON.stringify(maxAge)}`,
  );
}

/**
 * `onStale` checked: one of {@link ON_STALE}, or undefined.
 *
 * @throws TypeError naming `onStale` for anything else.
 * @example
 * checkOnStale("rerecord") // "rerecord"
 */
export function checkOnStale(onStale: unknown): OnStale | undefined {
  if (onStale === undefined || ON_STALE.includes(onStale as OnStale)) {
    return onStale as OnStale | undefined;
  }
  throw new TypeError(
    `onStale must be "warn", "error" or "rerecord", got ${JSON.stringify(onStale)}`,
  );
}

/** An entry value's `meta.recordedAt`, when it has a readable one. */
export function recordedAt(value: unknown): string | undefined {
  const at = (value as { meta?: { recordedAt?: unknown } } | null)?.meta?.recordedAt;
  return typeof at === "string" && !Number.isNaN(Date.parse(at)) ? at : undefined;
}

/**
 * Whether an entry value recorded at `meta.recordedAt` is older than `maxAgeMs` at `now`.
 * Values that are not entries are never stale.
 *
 * @example
 * isStale(entry, 86_400_000, Date.now())
 */
export function isStale(value: unknown, maxAgeMs: number, now: number): boolean {
  const at = recordedAt(value);
  return at !== undefined && now - Date.parse(at) > maxAgeMs;
}
