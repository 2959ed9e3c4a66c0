/**
 * The destination as the importer's recorder sees it: reads pass through,
 * a write never replaces a value already there (the recorder answers an
 * identity it finds with a hit, but it fails open on a store error, and an
 * unreadable key must not be read as "absent, write over it"), and under
 * `--dry-run` writes land in memory only, so the run reports exactly what a
 * real import would do without changing the destination.
 */
import { StoreError } from "../errors.js";
import type { JsonValue, Store } from "../store/index.js";

/** `store`, guarded as the module comment says. Closing it leaves `store` open. */
export function guardStore(store: Store, dryRun: boolean): Store {
  const written = new Map<string, JsonValue>();
  const get = async (key: string): Promise<JsonValue | undefined> =>
    written.has(key) ? written.get(key) : store.get(key);
  return {
    url: store.url,
    // The destination's replay defaults (a cassette's secret options…) are
    // the recorder's, as for any recording into it.
    ...(store.policy === undefined ? {} : { policy: store.policy }),
    get,
    async set(key, value, options) {
      if ((await get(key)) !== undefined) {
        throw new StoreError(
          store.url,
          "set",
          `import: ${store.url} already holds ${key}; it is kept, never overwritten (remove it first, e.g. with invocache prune, to import this one)`,
          { key },
        );
      }
      if (dryRun) written.set(key, value);
      else await store.set(key, value, options);
    },
    delete: (key) =>
      Promise.reject(new StoreError(store.url, "delete", `import never deletes (${key})`, { key })),
    list: (prefix) => store.list(prefix),
    acquireLease: (key, owner, ttlMs) =>
      dryRun ? Promise.resolve(true) : store.acquireLease(key, owner, ttlMs),
    releaseLease: (key, owner) => (dryRun ? Promise.resolve() : store.releaseLease(key, owner)),
    close: async () => {},
  };
}
