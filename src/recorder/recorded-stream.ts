/**
 * What a recorded stream is, as stored: a head, the time to it (`headAt`)
 * and its events, each with its time after the head (`t`). Read by the
 * stream's replay, by verify (which compares streams without their timing)
 * and by the fetch adapter.
 */
import type { JsonValue } from "../store/index.js";
import type { RecordedStream } from "./types.js";

/** Is a stored value a recorded stream? */
export function isRecordedStream(value: unknown): value is RecordedStream {
  const v = value as Partial<RecordedStream> | null;
  return (
    v !== null &&
    typeof v === "object" &&
    v.kind === "stream" &&
    "head" in v &&
    Array.isArray(v.events) &&
    // An event without `t` (hand-written, or from before timing was kept) replays at once.
    v.events.every(
      (e) =>
        e !== null &&
        typeof e === "object" &&
        (e.t === undefined || typeof e.t === "number") &&
        "data" in e,
    )
  );
}

/**
 * A value as verify compares it: a recorded stream without its timing
 * (`headAt`, each event's `t`), which differs on every live call while the
 * answer does not. Anything else is returned as it is.
 */
export function withoutTiming(value: JsonValue | undefined): JsonValue | undefined {
  if (!isRecordedStream(value)) return value;
  const { headAt: _headAt, events, ...rest } = value as RecordedStream<JsonValue, JsonValue>;
  return { ...rest, events: events.map(({ t: _t, ...event }) => event) } as JsonValue;
}
