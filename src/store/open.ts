/**
 * `openStore(url)`: the public way to get a store. Synchronous and cheap: the
 * backend (and its driver package) is imported on first use, so a user of the
 * embedded SQLite store never loads @keyv/redis or @keyv/postgres.
 */
import type { BackendFactory } from "./backend.js";
import { KeyvStore } from "./keyv-store.js";
import { readOnlyStore } from "./read-only.js";
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
 * With `{ readOnly: true }` a `sqlite://` file is opened read-only: nothing
 * is created (a missing file fails with `ENOENT` on first use), a file the
 * user may read but not write can be read, and writes fail. Other backends
 * open as usual; on every backend `set`, `delete` and leases then fail with a
 * `StoreError` saying the store is read-only.
 *
 * @throws TypeError naming `url` for an unknown scheme or a malformed URL.
 * @example
 * const store = openStore("sqlite://.invocache/cache.sqlite");
 * await store.set("greeting", { text: "hello" });
 * await store.get("greeting"); // { text: "hello" }
 * await store.close();
 */
export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const location = parseStoreUrl(url);
  if (options.readOnly === true) {
    return readOnlyStore(new KeyvStore(location.url, readOnlyFactory(location)));
  }
  return new KeyvStore(location.url, backendFactory(location));
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Only read: never create the SQLite file, refuse writes. Default false. */
  readOnly?: boolean;
}

function readOnlyFactory(location: StoreLocation): BackendFactory {
  if (location.kind !== "sqlite") return backendFactory(location);
  return async () =>
    (await import("./backends/sqlite-readonly.js")).createReadOnlySqliteBackend(location.path);
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
