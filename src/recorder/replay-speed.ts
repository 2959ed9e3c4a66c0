/**
 * The timing policy of a replayed stream: how long to wait before the head
 * and before each event. A recording keeps when its head arrived after the
 * upstream call started (`headAt`) and when each event arrived after the
 * head (`t`); a replay at speed s waits `headAt / s` before the head and
 * keeps each event at `t / s` after it. Speed 0 (the default) waits for
 * nothing. What the recording does not have (entries recorded before the
 * head time was kept, events without `t`) is replayed without waiting.
 */
import { InvalidOptionError } from "../errors.js";

/**
 * Check a `replaySpeed` option: a finite number ≥ 0 (0 = as fast as
 * possible, 1 = as recorded, 2 = twice as fast). `timing` is its older
 * spelling (`"none"` = 0, `"recorded"` = 1); given both, they must agree.
 *
 * @example
 * resolveReplaySpeed(undefined, "recorded", "createFetch") // 1
 * resolveReplaySpeed(-1, undefined, "createFetch") // throws InvalidOptionError (field "replaySpeed")
 */
export function resolveReplaySpeed(speed: unknown, timing: unknown, where: string): number {
  if (timing !== undefined && timing !== "none" && timing !== "recorded") {
    throw new InvalidOptionError(
      "timing",
      `${where}: timing must be "none" or "recorded", got ${describe(timing)}; or set replaySpeed (0 = as fast as possible, 1 = as recorded)`,
    );
  }
  const fromTiming = timing === "recorded" ? 1 : 0;
  if (speed === undefined) return fromTiming;
  if (typeof speed !== "number" || !Number.isFinite(speed) || speed < 0) {
    throw new InvalidOptionError(
      "replaySpeed",
      `${where}: replaySpeed must be a finite number ≥ 0 (0 = as fast as possible, the default; 1 = as recorded; 2 = twice as fast), got ${describe(speed)}`,
    );
  }
  if (timing !== undefined && speed > 0 !== (timing === "recorded")) {
    throw new InvalidOptionError(
      "replaySpeed",
      `${where}: replaySpeed ${speed} contradicts timing "${timing}"; give only replaySpeed (timing is its older spelling: "none" = 0, "recorded" = 1)`,
    );
  }
  return speed;
}

/** How long to wait, in ms, for something recorded at `recordedMs` when `elapsedMs` have passed. */
export function replayWait(recordedMs: unknown, speed: number, elapsedMs: number): number {
  if (speed === 0 || typeof recordedMs !== "number" || !Number.isFinite(recordedMs)) return 0;
  return Math.max(0, recordedMs / speed - elapsedMs);
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  return typeof value;
}
