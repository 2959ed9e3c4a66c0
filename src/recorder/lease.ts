/**
 * Cross-process single-flight for an auto-mode miss: take the store's lease
 * for the entry and record, or wait (with backoff) for its holder's
 * recording; a holder that takes too long is given up on.
 */
import { entryLeaseKey } from "../store/index.js";
import type { Answer, CallContext, Core } from "./core.js";
import { hitFrom } from "./lookup.js";
import { recordLive } from "./record.js";
import { sleep } from "./upstream.js";

/** Record the call under the cross-process lease, or be served its holder's recording. */
export async function recordUnderLease(core: Core, c: CallContext): Promise<Answer> {
  const leaseKey = entryLeaseKey(core.namespace, c.id, c.occurrence);
  const deadline = Date.now() + core.leaseMs * 3;
  let delay = 10;
  for (;;) {
    let acquired: boolean;
    try {
      acquired = await core.store.acquireLease(leaseKey, core.owner, core.leaseMs);
    } catch (error) {
      core.failOpen.storeFailed(
        `store ${core.store.url} failed to lease ${leaseKey}; calling upstream without single-flight`,
        error,
        c.id,
      );
      return recordLive(core, c);
    }
    if (acquired) return recordHoldingLease(core, c, leaseKey);
    await sleep(delay, c.opts.signal);
    delay = Math.min(delay * 2, 250);
    const raw = await core.failOpen.peek(c.key);
    if (raw !== undefined) return hitFrom(core, c, raw);
    if (Date.now() > deadline) {
      core.failOpen.warn(
        `gave up waiting for another process to record ${c.key}; calling upstream`,
        undefined,
        c.id,
      );
      return recordLive(core, c);
    }
  }
}

async function recordHoldingLease(core: Core, c: CallContext, leaseKey: string): Promise<Answer> {
  try {
    // Someone may have recorded it between our miss and our lease.
    const raw = await core.failOpen.peek(c.key);
    if (raw !== undefined) return hitFrom(core, c, raw);
    return await recordLive(core, c, leaseKey);
  } finally {
    await core.store.releaseLease(leaseKey, core.owner).catch(() => {});
  }
}
