/**
 * How long a store operation may take. A frozen server (SIGSTOP, a VM
 * paused, a half-open connection) accepts bytes and never answers: without
 * a limit every call on it would hang forever, silently.
 */
import { MAX_TIMEOUT_MS, type StoreLocation } from "./url.js";

/**
 * Default per-operation timeouts, in milliseconds, by backend. SQLite's is
 * a last resort above its own bounds: a statement waits up to 5 s for another
 * process's write lock (the busy timeout, then SQLITE_BUSY), and opening a
 * file retries the switch to WAL mode for up to 10 s more; only a file
 * system that stops answering (a hung network mount) reaches 30 s.
 */
export const STORE_TIMEOUT_MS = {
  memory: 5_000,
  sqlite: 30_000,
  redis: 5_000,
  postgres: 5_000,
} as const;

/**
 * The timeout for `location`: `options.timeoutMs`, else the URL's
 * `?timeoutMs=`, else the default for its backend.
 *
 * @example
 * storeTimeoutMs(parseStoreUrl("redis://h?timeoutMs=250"), {}) // 250
 */
export function storeTimeoutMs(location: StoreLocation, options: { timeoutMs?: number }): number {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("options must be an object such as { timeoutMs: 5000 }");
  }
  const given = options.timeoutMs;
  if (given !== undefined) {
    if (
      typeof given !== "number" ||
      !Number.isInteger(given) ||
      given < 1 ||
      given > MAX_TIMEOUT_MS
    ) {
      throw new RangeError(
        `options.timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${String(given)}`,
      );
    }
    return given;
  }
  if ("timeoutMs" in location && location.timeoutMs !== undefined) return location.timeoutMs;
  return STORE_TIMEOUT_MS[location.kind];
}
