/**
 * Recording: call upstream (renewing the cross-process lease while it runs)
 * and store the answer when it is storable: complete, JSON, within the entry
 * limit. What is not storable still reaches the caller; it is never stored.
 */
import { jsonSnapshot } from "../json/index.js";
import type { JsonValue } from "../store/index.js";
import { type Answer, type CallContext, type Core, completeness } from "./core.js";
import { buildEntry, oversize, streamOversize } from "./entry.js";
import { countBypass } from "./lookup.js";
import { callUpstream, type Upstream } from "./upstream.js";

/** Call upstream and store the result if it is storable. */
export async function recordLive(core: Core, c: CallContext, leaseKey?: string): Promise<Answer> {
  const started = performance.now();
  const got = await withLeaseRenewal(core, leaseKey, c.id, () => callUpstream(c.fn, c.opts.signal));
  const given = c.opts.upstreamMs;
  // An answer fetched before `fn` (a cache's update): its own upstream time, not fn's ~0 ms.
  const ms =
    typeof given === "number" && Number.isFinite(given) && given >= 0
      ? given
      : performance.now() - started;
  const durationMs = Math.round(ms * 1000) / 1000;
  return store(core, c, got, durationMs);
}

/** Store what came back, or say why not. */
async function store(
  core: Core,
  c: CallContext,
  got: Upstream,
  durationMs: number,
): Promise<Answer> {
  const { value } = got;
  const notStored: Answer = { value, hit: false, durationMs };
  if (got.kind === "live") {
    countBypass(core, c, "answered live (answerLive): not stored");
    return { ...notStored, live: true, unshareable: true };
  }
  if (got.kind === "too-large") {
    // A stream that passed the entry limit: recording stopped there, the reader goes on live.
    const error = streamOversize(core, c, got.limit, value);
    if (c.mode === "record") throw error;
    core.failOpen.warn(error.message, error, c.id);
    core.stats.bypassed++;
    return { ...notStored, unshareable: true };
  }
  const complete = completeness(core, c);
  if (complete !== undefined && !complete(value)) {
    core.events.emit("bypass", {
      id: c.id,
      occurrence: c.occurrence,
      reason: "incomplete response (isComplete returned false)",
    });
    core.stats.bypassed++;
    return notStored;
  }
  // Checked and copied once here; the store reuses this frozen snapshot
  // instead of walking the response again (src/json, jsonSnapshot).
  const entry = buildEntry(core, c, jsonSnapshot(value, "response"), durationMs);
  const tooLarge = oversize(core, c, entry, value);
  if (tooLarge !== undefined) {
    if (c.mode === "record") throw tooLarge;
    core.failOpen.warn(tooLarge.message, tooLarge, c.id);
    core.stats.bypassed++;
    return notStored;
  }
  await core.failOpen.write(c.key, entry as unknown as JsonValue, c.id, c.mode);
  core.stats.recorded++;
  const usage = entry.meta.usage === undefined ? {} : { usage: entry.meta.usage };
  core.events.emit("record", {
    id: c.id,
    occurrence: c.occurrence,
    key: c.key,
    durationMs,
    ...usage,
  });
  return { ...notStored, recorded: true, ...usage };
}

/**
 * Run `work`, renewing the lease (when held) every third of its length.
 * A lease that went unrenewed for longer than its length (the store failed
 * meanwhile) or was taken by another process may have let another process
 * call upstream for the same entry: that is said once, as a warning naming
 * the entry, so a duplicate upstream call is never silent. The call itself
 * goes on (it cannot be taken back).
 */
async function withLeaseRenewal<T>(
  core: Core,
  leaseKey: string | undefined,
  id: string,
  work: () => Promise<T>,
): Promise<T> {
  if (leaseKey === undefined) return work();
  // The lease was taken (or renewed) just before: it holds until at least lastOk + leaseMs.
  let lastOk = Date.now();
  let lapsed = false;
  const lapse = () => {
    if (lapsed) return;
    lapsed = true;
    core.failOpen.warn(
      `the lease ${leaseKey} lapsed while its upstream call was in flight (store ${core.store.url} did not renew it in time, or another process took it): another process may have called upstream for the same entry too`,
      undefined,
      id,
    );
  };
  const renew = setInterval(
    () => {
      const sent = Date.now();
      core.store.acquireLease(leaseKey, core.owner, core.leaseMs).then(
        (ok) => {
          if (!ok || sent > lastOk + core.leaseMs) lapse();
          if (ok) lastOk = sent;
        },
        () => {
          if (Date.now() > lastOk + core.leaseMs) lapse();
        },
      );
    },
    Math.max(50, Math.floor(core.leaseMs / 3)),
  );
  renew.unref?.();
  try {
    return await work();
  } finally {
    clearInterval(renew);
    if (Date.now() > lastOk + core.leaseMs) lapse();
  }
}
