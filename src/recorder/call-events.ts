/**
 * A call's events, each with the counter it goes with: a hit, a miss, a
 * bypass, a recording, a response divergence. The steps of the pipeline
 * report through these, so what a listener sees and what `recorder.stats`
 * counts are said in one place. `stats.hits` and `stats.misses` are counted
 * with the call's accounts (accounting.ts), not here. Where a counter moves
 * before or after its event is kept as it always was (a listener may read
 * `stats`).
 */
import type { ValueDiff } from "../json/index.js";
import type { Usage } from "../usage/index.js";
import type { CallContext, Core } from "./core.js";

/** What the call events need: the counters and the event channel. */
export type CallEventDeps = Pick<Core, "stats" | "events">;

/** A hit's event and saved time (a follower's share included). */
export function countHit(deps: CallEventDeps, c: CallContext, savedMs: number): void {
  deps.stats.savedMs += savedMs;
  if (deps.events.listening("hit"))
    deps.events.emit("hit", { id: c.id, occurrence: c.occurrence, key: c.key, savedMs });
}

/** A miss's event; the call's facts keep that it missed, for the accounting. */
export function countMiss(deps: Pick<Core, "events">, c: CallContext): void {
  c.facts.missed = true;
  deps.events.emit("miss", {
    id: c.id,
    occurrence: c.occurrence,
    key: c.key,
    mode: c.mode,
    manifest: c.manifest,
  });
}

/** A call that went upstream without reading or writing: counted, then its event. */
export function countBypass(deps: CallEventDeps, c: CallContext, reason: string): void {
  deps.stats.bypassed++;
  deps.events.emit("bypass", { id: c.id, occurrence: c.occurrence, reason });
}

/** An answer not stored because `isComplete` refused it: its event, then counted. */
export function countIncomplete(deps: CallEventDeps, c: CallContext): void {
  deps.events.emit("bypass", {
    id: c.id,
    occurrence: c.occurrence,
    reason: "incomplete response (isComplete returned false)",
  });
  deps.stats.bypassed++;
}

/** An answer not stored because it was too large: already warned of, counted as a bypass. */
export function countTooLarge(deps: Pick<Core, "stats">): void {
  deps.stats.bypassed++;
}

/** A stored recording: counted, then its `record` event. */
export function countRecorded(
  deps: CallEventDeps,
  c: CallContext,
  durationMs: number,
  usage: { usage?: Usage },
): void {
  deps.stats.recorded++;
  deps.events.emit("record", {
    id: c.id,
    occurrence: c.occurrence,
    key: c.key,
    durationMs,
    ...usage,
  });
}

/** Verify mode: the live answer differs from the recording. Counted, then its event. */
export function countResponseDivergence(
  deps: CallEventDeps,
  c: CallContext,
  expected: unknown,
  actual: unknown,
  fields: ValueDiff[] | undefined,
): void {
  deps.stats.divergences++;
  deps.events.emit("divergence", {
    kind: "response",
    id: c.id,
    occurrence: c.occurrence,
    expected,
    actual,
    ...(fields === undefined ? {} : { fields }),
  });
}
