/**
 * A Store that counts the operations made through it, for tests and benches
 * that check how many round trips a code path costs (a replay hit must be
 * exactly one read). Counting, not timing: the numbers do not depend on the
 * machine.
 */
import type { GetOptions, Store } from "../../src/store/types.js";

/** Operation counts of a {@link countingStore}. */
export interface StoreOpCounts {
  get: number;
  /** `getHit` (a replay hit's read, without the manifest): forwarded only when the store has it. */
  getHit: number;
  set: number;
  delete: number;
  list: number;
  acquireLease: number;
  releaseLease: number;
}

/** Every counted read of one key. */
export const readsOf = (c: StoreOpCounts): number => c.get + c.getHit;

/** Every counted operation that changes the store. */
export const writesOf = (c: StoreOpCounts): number =>
  c.set + c.delete + c.acquireLease + c.releaseLease;

/** Wrap `inner`: same behaviour, every call counted in `counts`; `reset()` zeroes them. */
export function countingStore(inner: Store): {
  store: Store;
  counts: StoreOpCounts;
  reset(): void;
} {
  const counts: StoreOpCounts = {
    get: 0,
    getHit: 0,
    set: 0,
    delete: 0,
    list: 0,
    acquireLease: 0,
    releaseLease: 0,
  };
  const store: Store = {
    get url() {
      return inner.url;
    },
    get(key, options) {
      counts.get++;
      return inner.get(key, options);
    },
    ...(inner.getHit === undefined
      ? {}
      : {
          getHit(key: string, options?: GetOptions) {
            counts.getHit++;
            return inner.getHit!(key, options);
          },
        }),
    set(key, value, options) {
      counts.set++;
      return inner.set(key, value, options);
    },
    delete(key) {
      counts.delete++;
      return inner.delete(key);
    },
    list(prefix) {
      counts.list++;
      return inner.list(prefix);
    },
    acquireLease(key, owner, ttlMs) {
      counts.acquireLease++;
      return inner.acquireLease(key, owner, ttlMs);
    },
    releaseLease(key, owner) {
      counts.releaseLease++;
      return inner.releaseLease(key, owner);
    },
    close() {
      return inner.close();
    },
  };
  return {
    store,
    counts,
    reset() {
      for (const k of Object.keys(counts) as (keyof StoreOpCounts)[]) counts[k] = 0;
    },
  };
}
