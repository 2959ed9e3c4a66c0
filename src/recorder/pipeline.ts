/**
 * The call pipeline (docs/recorder.md, "The call pipeline"): one path for
 * every call, plain or streamed, its steps in the order they run:
 *
 * 1. side-effect rule (side-effects.ts): a tool with side effects, in auto
 *    on a shared store, runs live and unstored;
 * 2. route by mode (route.ts): live, record, verify, or look up first;
 * 3. lookup (lookup.ts): a hit, a miss, or a store that is down;
 * 4. replay miss (replay-miss.ts): in replay, a miss is an error;
 * 5. share (single-flight.ts): follow an identical call in flight;
 * 6. lease (lease.ts): take the entry's lease, or be served its holder's recording;
 * 7. upstream (upstream.ts): call `fn`;
 * 8. record (record.ts): store what came back, if it is storable;
 * 9. verify (verify.ts): in verify mode, compare the live answer with the recording.
 *
 * Steps do not call each other: each returns what it found and this file
 * decides what runs next, so a call reads top to bottom here. Each step is
 * given the recorder's `Core` but typed to take only the part it needs.
 */
import { countBypass, countMiss } from "./call-events.js";
import type { Answer, CallContext, Core } from "./core.js";
import { type Lease, NO_LEASE, releaseLease, renewingLease, takeLease } from "./lease.js";
import { hitFrom, lookup } from "./lookup.js";
import { recordAnswer } from "./record.js";
import { replayMiss } from "./replay-miss.js";
import { routeOf } from "./route.js";
import { sideEffectRule } from "./side-effects.js";
import { type SingleFlight, shareAnswer } from "./single-flight.js";
import { callUpstream, upstreamMs } from "./upstream.js";
import { compareWithRecording, readRecording } from "./verify.js";

/**
 * Answer one call. Not an async function: a hit resolves with `lookupFirst`'s
 * own promise, not through another layer.
 */
export function answerCall(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  const sideEffects = sideEffectRule(core, c);
  if (sideEffects !== undefined) return uncached(core, c, sideEffects);
  switch (routeOf(c.mode)) {
    case "live":
      return bypass(core, c, "passthrough mode");
    case "lookup":
      return lookupFirst(core, flights, c);
    case "record":
      return recordAlways(core, flights, c);
    case "verify":
      return verifyLive(core, c);
  }
}

/** replay and auto: serve the recording; a miss is an error (replay) or recorded once (auto). */
async function lookupFirst(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  const found = await lookup(core, c);
  if (typeof found === "object") return found;
  if (c.mode === "replay") throw await replayMiss(core, c);
  return flights.run(
    c,
    () => {
      // Only the leader missed: a follower is served the leader's answer.
      countMiss(core, c);
      if (found === "store-down") return bypass(core, c, "store unavailable");
      return leased(core, c);
    },
    (shared) => share(core, c, shared),
  );
}

/** A follower of an identical call in flight: the leader's answer, unless this call refuses it. */
function share(core: Core, c: CallContext, shared: Answer): Answer | Promise<Answer> {
  return (
    shareAnswer(core, c, shared) ??
    bypass(core, c, "the shared answer failed this call's isComplete")
  );
}

/** An auto-mode miss: record under the cross-process lease, or serve what its holder recorded. */
async function leased(core: Core, c: CallContext): Promise<Answer> {
  const lease = await takeLease(core, c);
  try {
    if (lease.recorded !== undefined) return hitFrom(core, c, lease.recorded);
    return await upstreamThenRecord(core, c, lease);
  } finally {
    if (lease.key !== undefined) await releaseLease(core, lease.key);
  }
}

/** Call upstream (renewing the lease while it runs, when one is held), then record the answer. */
async function upstreamThenRecord(
  core: Core,
  c: CallContext,
  lease: Pick<Lease, "key" | "takenAt">,
): Promise<Answer> {
  const started = performance.now();
  const got = await renewingLease(core, lease, c.id, () => callUpstream(c.fn, c.opts.signal));
  return recordAnswer(core, c, got, upstreamMs(c.opts.upstreamMs, started));
}

/** record: always upstream and (re)write, sharing in-process identical calls. */
async function recordAlways(core: Core, flights: SingleFlight, c: CallContext): Promise<Answer> {
  // Record mode does not read, but a cassette that cannot be loaded is
  // a fixture error to show before a paid call, not after it. A store that
  // cannot raise one is not read (record-probe.ts).
  if (core.probesBeforeRecord) await core.failOpen.peek(c.key);
  return flights.run(
    c,
    () => upstreamThenRecord(core, c, NO_LEASE),
    (shared) => share(core, c, shared),
  );
}

/** verify: read the recording, call live, compare; write nothing. */
async function verifyLive(core: Core, c: CallContext): Promise<Answer> {
  // Read first: a malformed cassette is an error before anything goes upstream.
  const raw = await readRecording(core, c);
  const got = await callUpstream(c.fn, c.opts.signal);
  return compareWithRecording(core, c, raw, got);
}

/** A tool call with side effects: called live and not stored, yet it counts in the run. */
async function uncached(core: Core, c: CallContext, reason: string): Promise<Answer> {
  const answer = await bypass(core, c, reason);
  return answer.live === true ? answer : { ...answer, uncached: true };
}

/** Call upstream without reading or writing, counted as a bypass. */
async function bypass(core: Core, c: CallContext, reason: string): Promise<Answer> {
  countBypass(core, c, reason);
  const got = await callUpstream(c.fn, c.opts.signal);
  return {
    value: got.value,
    hit: false,
    bypass: reason,
    ...(got.kind === "value" ? {} : { unshareable: true }),
    ...(got.kind === "live" ? { live: true } : {}),
  };
}
