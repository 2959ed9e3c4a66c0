/**
 * The lease step (docs/recorder.md, "The call pipeline"): cross-process
 * single-flight for an auto-mode miss. Take the store's lease for the entry,
 * or wait (with backoff) for its holder's recording; a holder that takes too
 * long is given up on. While the holder calls upstream, the lease is renewed.
 * The step says what it got; the pipeline serves a recording found
 * meanwhile, or records, and releases a lease it holds.
 */
import type { JsonValue } from "../store/index.js";
import { entryLeaseKey } from "../store/index.js";
import { sleep } from "./abortable.js";
import type { CallContext, Core } from "./core.js";
import { FAILED_READ } from "./fail-open.js";

/** What leasing reads: the store and its fail-open reporting, this recorder's owner name and lease length. */
export type LeaseDeps = Pick<Core, "store" | "namespace" | "owner" | "leaseMs" | "failOpen">;

/** What the lease step got. */
export interface Lease {
  /** The lease held (release it when done), or undefined: record without one. */
  readonly key: string | undefined;
  /**
   * When the request that took (or last renewed) the lease was sent: the
   * store set its expiry no earlier, so it holds until at least this plus
   * `leaseMs`. 0 when no lease is held.
   */
  readonly takenAt: number;
  /** Recorded by another process while this call missed or waited: serve it. */
  readonly recorded: JsonValue | undefined;
}

/** No lease and nothing recorded meanwhile: call upstream without single-flight. */
export const NO_LEASE: Lease = Object.freeze({ key: undefined, recorded: undefined, takenAt: 0 });

/**
 * Take the entry's lease, or wait for its holder's recording. A lease this
 * call took is either handed back (`key`: the caller records, then releases
 * it) or released here, however the wait ends (served, given up, aborted, a
 * cassette that cannot be loaded): never left to expire while other
 * processes wait on it.
 */
export async function takeLease(deps: LeaseDeps, c: CallContext): Promise<Lease> {
  const leaseKey = entryLeaseKey(deps.namespace, c.id, c.occurrence);
  const deadline = Date.now() + deps.leaseMs * 3;
  let delay = 10;
  let taken = false;
  try {
    for (;;) {
      let acquired: boolean;
      const sent = Date.now();
      try {
        acquired = await deps.store.acquireLease(leaseKey, deps.owner, deps.leaseMs);
      } catch (error) {
        deps.failOpen.storeFailed(
          `store ${deps.store.url} failed to lease ${leaseKey}; calling upstream without single-flight`,
          error,
          c.id,
        );
        return NO_LEASE;
      }
      if (acquired) {
        taken = true;
        // The lease is ours: someone may still have recorded the entry
        // between our miss and our lease, so it is read again.
        const recorded = await deps.failOpen.read(c.key);
        // A read after the taking that outlived the lease (a slow or restarting
        // store) may have let another process take it, record and release it
        // after our read looked: calling upstream then would not be
        // single-flight. So a lease half gone by now is taken again (renewed if
        // still ours) and the read done again, through the wait below, whose
        // deadline bounds a store that is always this slow. Half, not all: the
        // first renewal comes a third of a lease later and must find it ours.
        // A read that failed (a store restarting) is no answer at all: another
        // process may have recorded the entry just before, so it is read again
        // the same way, never taken for a miss.
        if (
          recorded !== FAILED_READ &&
          (recorded !== undefined || Date.now() < sent + deps.leaseMs / 2)
        ) {
          taken = false;
          return { key: leaseKey, recorded, takenAt: sent };
        }
      }
      await sleep(delay, c.opts.signal);
      delay = Math.min(delay * 2, 250);
      const raw = await deps.failOpen.peek(c.key);
      if (raw !== undefined) return { key: undefined, recorded: raw, takenAt: 0 };
      if (Date.now() > deadline) {
        deps.failOpen.warn(
          `gave up waiting for another process to record ${c.key}; calling upstream`,
          undefined,
          c.id,
        );
        return NO_LEASE;
      }
    }
  } finally {
    if (taken) await releaseLease(deps, leaseKey);
  }
}

/** Release a lease this recorder holds (a failure is left to the lease's expiry). */
export async function releaseLease(deps: LeaseDeps, leaseKey: string): Promise<void> {
  await deps.store.releaseLease(leaseKey, deps.owner).catch(() => {});
}

/**
 * Run `work`, renewing the lease (when held) every third of its length.
 * A lease that went unrenewed for longer than its length (the store failed
 * meanwhile) or was taken by another process may have let another process
 * call upstream for the same entry: that is said once, as a warning naming
 * the entry, so a duplicate upstream call is never silent. The call itself
 * goes on (it cannot be taken back).
 */
export async function renewingLease<T>(
  deps: LeaseDeps,
  lease: Pick<Lease, "key" | "takenAt">,
  id: string,
  work: () => Promise<T>,
): Promise<T> {
  const leaseKey = lease.key;
  if (leaseKey === undefined) return work();
  // The store set the lease's expiry no earlier than its taking was sent: it
  // holds until at least lastOk + leaseMs. (Not "now": the taking's answer
  // and the read after it may have taken a while.)
  let lastOk = lease.takenAt;
  let lapsed = false;
  const lapse = () => {
    if (lapsed) return;
    lapsed = true;
    deps.failOpen.warn(
      `the lease ${leaseKey} lapsed while its upstream call was in flight (store ${deps.store.url} did not renew it in time, or another process took it): another process may have called upstream for the same entry too`,
      undefined,
      id,
    );
  };
  const renew = setInterval(
    () => {
      const sent = Date.now();
      deps.store.acquireLease(leaseKey, deps.owner, deps.leaseMs).then(
        (ok) => {
          // A renewal ran somewhere between its sending and its answer: one
          // answered after lastOk + leaseMs may have run after the lease
          // expired (and after another process took and released it), so it
          // proves nothing. At lastOk + leaseMs the lease is already free to take.
          if (!ok || Date.now() >= lastOk + deps.leaseMs) lapse();
          if (ok) lastOk = Math.max(lastOk, sent);
        },
        () => {
          if (Date.now() >= lastOk + deps.leaseMs) lapse();
        },
      );
    },
    Math.max(50, Math.floor(deps.leaseMs / 3)),
  );
  renew.unref?.();
  try {
    return await work();
  } finally {
    clearInterval(renew);
    if (Date.now() >= lastOk + deps.leaseMs) lapse();
  }
}
