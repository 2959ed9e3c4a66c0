/**
 * A store that refuses to change anything: what `openStore(url, { readOnly:
 * true })` returns, so a read-only open fails the same clear way on every
 * backend instead of however each database reports it.
 */
import { StoreError } from "../errors.js";
import type { GetOptions, Store } from "./types.js";

/**
 * `store` with `set`, `delete` and leases refused (a `StoreError`, operation
 * named); reads and `close` pass through.
 *
 * @example
 * const store = readOnlyStore(openStore("memory://"));
 * await store.set("k", 1); // rejects: read-only
 */
export function readOnlyStore(store: Store): Store {
  const refuse = (operation: string, key: string) =>
    Promise.reject(
      new StoreError(
        store.url,
        operation,
        `invocache store ${store.url}: ${operation} ${JSON.stringify(key)} refused: the store was opened read-only. Open it without { readOnly: true } to write.`,
        { key },
      ),
    );
  return {
    url: store.url,
    get: (key, options) => store.get(key, options),
    ...(store.getHit === undefined
      ? {}
      : { getHit: (key: string, options?: GetOptions) => store.getHit!(key, options) }),
    list: (prefix) => store.list(prefix),
    ...(store.listByRecordedAt === undefined ? {} : { listByRecordedAt: store.listByRecordedAt }),
    ...(store.listsInKeyOrder === undefined ? {} : { listsInKeyOrder: store.listsInKeyOrder }),
    ...(store.listMeta === undefined ? {} : { listMeta: (query) => store.listMeta!(query) }),
    ...(store.statsMeta === undefined
      ? {}
      : { statsMeta: (query, onProgress) => store.statsMeta!(query, onProgress) }),
    set: (key) => refuse("set", key),
    delete: (key) => refuse("delete", key),
    ...(store.deleteIfUnchanged === undefined
      ? {}
      : { deleteIfUnchanged: (key: string) => refuse("delete", key) }),
    acquireLease: (key) => refuse("acquireLease", key),
    releaseLease: (key) => refuse("releaseLease", key),
    close: () => store.close(),
  };
}
