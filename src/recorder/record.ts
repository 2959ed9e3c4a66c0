/**
 * The record step (docs/recorder.md, "The call pipeline"): store what came
 * back from upstream when it is storable (complete, JSON, within the entry
 * limit), or say why not. What is not storable still reaches the caller; it
 * is never stored.
 */
import { jsonSnapshot } from "../json/index.js";
import type { JsonValue } from "../store/index.js";
import { countBypass, countIncomplete, countRecorded, countTooLarge } from "./call-events.js";
import type { Upstream } from "./core.js";
import { type Answer, type CallContext, type Core, completeness } from "./core.js";
import { buildEntry, oversize, streamOversize } from "./entry.js";

/** What recording reads: the store's fail-open writes, the counters, redaction and the entry limit. */
export type RecordDeps = Pick<
  Core,
  "failOpen" | "stats" | "events" | "opts" | "secrets" | "maxEntryBytes"
>;

/** Store what came back (`got`, which took `durationMs` upstream), or say why not. */
export async function recordAnswer(
  deps: RecordDeps,
  c: CallContext,
  got: Upstream,
  durationMs: number,
): Promise<Answer> {
  const { value } = got;
  const notStored: Answer = { value, hit: false, durationMs };
  if (got.kind === "live") {
    countBypass(deps, c, "answered live (answerLive): not stored");
    return { ...notStored, live: true, unshareable: true };
  }
  if (got.kind === "too-large") {
    // A stream that passed the entry limit: recording stopped there, the reader goes on live.
    const error = streamOversize(deps, c, got.limit, value);
    if (c.mode === "record") throw error;
    deps.failOpen.warn(error.message, error, c.id);
    countTooLarge(deps);
    return { ...notStored, unshareable: true };
  }
  const complete = completeness(deps, c);
  if (complete !== undefined && !complete(value)) {
    countIncomplete(deps, c);
    return notStored;
  }
  // Checked and copied once here; the store reuses this frozen snapshot
  // instead of walking the response again (src/json, jsonSnapshot).
  const entry = buildEntry(deps, c, jsonSnapshot(value, "response"), durationMs);
  const tooLarge = oversize(deps, c, entry, value);
  if (tooLarge !== undefined) {
    if (c.mode === "record") throw tooLarge;
    deps.failOpen.warn(tooLarge.message, tooLarge, c.id);
    countTooLarge(deps);
    return notStored;
  }
  // An Entry is JSON by construction (buildEntry): the store's parameter type is the wider JsonValue.
  await deps.failOpen.write(c.key, entry as unknown as JsonValue, c.id, c.mode);
  const usage = entry.meta.usage === undefined ? {} : { usage: entry.meta.usage };
  countRecorded(deps, c, durationMs, usage);
  return { ...notStored, recorded: true, ...usage };
}
