/**
 * `openStore(url)`: the public way to get a store. Synchronous and cheap: the
 * backend (and its driver package) is imported on first use, so a user of the
 * embedded SQLite store never loads @keyv/redis or @keyv/postgres.
 */
import type { BackendFactory } from "./backend.js";
import { KeyvStore } from "./keyv-store.js";
import type { Store } from "./types.js";
import { parseStoreUrl, type StoreLocation } from "./url.js";

/**
 * Open the store at `url`. Nothing is connected or created until the first
 * operation; connection problems surface there as `StoreError`.
 *
 * - `sqlite://path` (relative to `process.cwd()`), `sqlite:///abs/path`, or
 *   `sqlite://` for `.invocache/cache.sqlite` (see `defaultStoreUrl`); parent
 *   folders are created on first use.
 * - `memory://`: private to this call, gone on `close()`.
 * - `redis://[user:pass@]host[:port][/db]`, `rediss://`: needs `@keyv/redis`.
 * - `postgres://…`, `postgresql://…`: needs `@keyv/postgres`.
 *
 * `store.url` never contains a password.
 *
 * @throws TypeError naming `url` for an unknown scheme or a malformed URL.
 * @example
 * const store = openStore("sqlite://.invocache/cache.sqlite");
 * await store.set("greeting", { text: "hello" });
 * await store.get("greeting"); // { text: "hello" }
 * await store.close();
 */
export function openStore(url: string): Store {
  const location = parseStoreUrl(url);
  return new KeyvStore(location.url, backendFactory(location));
}

function backendFactory(location: StoreLocation): BackendFactory {
  switch (location.kind) {
    case "memory":
      return async () => (await import("./backends/memory.js")).createMemoryBackend();
    case "sqlite":
      return async () => (await import("./backends/sqlite.js")).createSqliteBackend(location.path);
    case "redis":
      return async () =>
        (await import("./backends/redis.js")).createRedisBackend(location.connectUrl, location.url);
    case "postgres":
      return async () =>
        (await import("./backends/postgres.js")).createPostgresBackend(
          location.connectUrl,
          location.url,
        );
  }
}
