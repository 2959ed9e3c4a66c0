/**
 * `openStore(url)`: the public way to get a store. Synchronous and cheap: the
 * backend (and its driver package) is imported on first use, so a user of the
 * embedded SQLite store never loads @keyv/redis or @keyv/postgres.
 */
import type { BackendFactory } from "./backend.js";
import { KeyvStore } from "./keyv-store.js";
import { readOnlyStore } from "./read-only.js";
import { storeTimeoutMs } from "./timeout.js";
import type { Store } from "./types.js";
import { parseStoreUrl, type StoreLocation } from "./url.js";

/** Options for {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * How long one store operation may take before it fails with a
   * `StoreError` ("timed out"), in milliseconds: opening the backend and the
   * operation itself. Defaults: `STORE_TIMEOUT_MS` (5 s for Redis and
   * Postgres, 30 s for SQLite, whose own busy timeout and open retries
   * already bound a locked file). Takes precedence over a `?timeoutMs=` in a Redis/Postgres URL.
   */
  timeoutMs?: number;
  /** Only read: never create the SQLite file, refuse writes. Default false. */
  readOnly?: boolean;
  /**
   * Which binding a `sqlite://` store goes through. `"sqlite3"` (default):
   * `@keyv/sqlite` over the asynchronous `sqlite3`, a dependency of
   * invocache. `"better-sqlite3"`: the synchronous `better-sqlite3` (12.x),
   * an optional peer the user installs; several times faster per read, but a
   * statement waiting for another process's write lock blocks the event loop
   * (docs/performance.md, "SQLite drivers"). Both use the same file layout.
   * Read-only opens always use the default driver. Ignored by other schemes.
   */
  sqliteDriver?: SqliteDriver;
}

/** The SQLite bindings {@link OpenStoreOptions.sqliteDriver} can choose. */
export type SqliteDriver = "sqlite3" | "better-sqlite3";

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
 * `store.url` never contains a password, and no error message does either.
 *
 * With `{ readOnly: true }` a `sqlite://` file is opened read-only: nothing
 * is created (a missing file fails with `ENOENT` on first use), a file the
 * user may read but not write can be read, and writes fail. Other backends
 * open as usual; on every backend `set`, `delete` and leases then fail with a
 * `StoreError` saying the store is read-only.
 *
 * Every operation has a timeout (`options.timeoutMs`, or `?timeoutMs=` on a
 * Redis/Postgres URL): a store that stops answering (a frozen server with its
 * socket open) fails with a `StoreError` instead of hanging. A lease asked for
 * or released by an operation that timed out never takes effect later.
 *
 * @throws TypeError naming `url` for an unknown scheme or a malformed URL;
 *   RangeError naming `options.timeoutMs` when it is not 1 to 2^31-1.
 * @example
 * const store = openStore("sqlite://.invocache/cache.sqlite");
 * await store.set("greeting", { text: "hello" });
 * await store.get("greeting"); // { text: "hello" }
 * await store.close();
 */
export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const location = parseStoreUrl(url);
  const driver = options.sqliteDriver ?? "sqlite3";
  if (driver !== "sqlite3" && driver !== "better-sqlite3") {
    throw new TypeError(
      `options.sqliteDriver must be "sqlite3" or "better-sqlite3", got ${JSON.stringify(driver)}`,
    );
  }
  const timeoutMs = storeTimeoutMs(location, options);
  if (options.readOnly === true) {
    return readOnlyStore(
      new KeyvStore(location.url, readOnlyFactory(location), {
        timeoutMs,
        load: () => loadBackend(location),
        sortsByRecordedAt: location.kind === "sqlite" || location.kind === "postgres",
        listsInKeyOrder: listsInKeyOrder(location),
        ...metaOf(location),
      }),
    );
  }
  if (location.kind === "sqlite" && driver === "better-sqlite3") {
    return new KeyvStore(
      location.url,
      async () =>
        (await import("./backends/better-sqlite3.js")).createBetterSqliteBackend(location.path),
      {
        timeoutMs,
        load: () => import("./backends/better-sqlite3.js"),
        listsInKeyOrder: true,
        meta: "stored",
      },
    );
  }
  return new KeyvStore(location.url, backendFactory(location), {
    timeoutMs,
    load: () => loadBackend(location),
    // Postgres sorts in the database whether or not the store is read-only.
    sortsByRecordedAt: location.kind === "postgres",
    listsInKeyOrder: listsInKeyOrder(location),
    ...metaOf(location),
  });
}

/** Where `Store.listMeta` answers from (see `KeyvStoreOptions.meta`). */
function metaOf(location: StoreLocation): { meta?: "stored" | "computed" } {
  if (location.kind === "sqlite" || location.kind === "postgres" || location.kind === "redis") {
    return { meta: "stored" };
  }
  if (location.kind === "memory") return { meta: "computed" };
  return {};
}

/** The SQL backends page through their primary key in binary order (`ORDER BY key`, `COLLATE "C"`). */
function listsInKeyOrder(location: StoreLocation): boolean {
  return location.kind === "sqlite" || location.kind === "postgres";
}

/** Import a backend's code and driver, without connecting (see `KeyvStoreOptions.load`). */
async function loadBackend(location: StoreLocation): Promise<unknown> {
  switch (location.kind) {
    case "memory":
      return import("./backends/memory.js");
    case "sqlite":
      return Promise.all([import("./backends/sqlite.js"), import("@keyv/sqlite")]);
    case "redis":
      return Promise.all([import("./backends/redis.js"), import("@keyv/redis")]);
    case "postgres":
      return Promise.all([import("./backends/postgres.js"), import("@keyv/postgres")]);
  }
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
