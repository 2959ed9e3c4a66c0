/** Errors of the replay policy, tool calls' included (each names what to do). */
import { InvocacheError } from "../errors.js";
import type { FieldDiff, Manifest } from "../identity/index.js";
import { formatDiffs, type ValueDiff } from "../json/index.js";

/** A recording that came close: what differs from the request that missed. */
export interface NearestEntry {
  id: string;
  occurrence: number;
  recordedAt: string;
  diffs: FieldDiff[];
}

/** Everything a miss report knows. */
export interface MissDetails {
  id: string;
  occurrence: number;
  mode: string;
  store: string;
  manifest: Manifest;
  /** Occurrences of this identity that are recorded (0-based), when some are. */
  recordedOccurrences: number[];
  nearest: NearestEntry[];
  /** Normalization rules that fired on the prompt and task, with counts. */
  rulesFired: Record<string, number>;
  /** What to run to record the missing call. */
  rerecord: string;
}

/**
 * A call in `replay` mode has no recording. The message shows the nearest
 * recordings field by field, says whether the identity was recorded but
 * already consumed in this run, which normalization rules fired, and how to
 * re-record.
 *
 * @example
 * try { await recorder.call(req, fn) } catch (e) {
 *   if (e instanceof ReplayMissError) console.log(e.nearest[0]?.diffs)
 * }
 */
export class ReplayMissError extends InvocacheError implements MissDetails {
  readonly id: string;
  readonly shortId: string;
  readonly occurrence: number;
  readonly mode: string;
  readonly store: string;
  readonly manifest: Manifest;
  readonly recordedOccurrences: number[];
  readonly nearest: NearestEntry[];
  readonly rulesFired: Record<string, number>;
  readonly rerecord: string;

  constructor(details: MissDetails, message: string) {
    super("ERR_REPLAY_MISS", message);
    this.id = details.id;
    this.shortId = details.id.slice(0, 12);
    this.occurrence = details.occurrence;
    this.mode = details.mode;
    this.store = details.store;
    this.manifest = details.manifest;
    this.recordedOccurrences = details.recordedOccurrences;
    this.nearest = details.nearest;
    this.rulesFired = details.rulesFired;
    this.rerecord = details.rerecord;
  }
}

/**
 * A replayed run diverged from its recording: a gate gave a different verdict,
 * or the run called a different sequence of identities.
 *
 * @example
 * await recorder.verdict(id, "accepted") // VerdictDivergenceError: recorded "rejected"
 */
export class DivergenceError extends InvocacheError {
  readonly kind: "verdict" | "trajectory";
  readonly expected: unknown;
  readonly actual: unknown;

  constructor(kind: "verdict" | "trajectory", expected: unknown, actual: unknown, message: string) {
    super(kind === "verdict" ? "ERR_VERDICT_DIVERGENCE" : "ERR_TRAJECTORY_DIVERGENCE", message);
    this.kind = kind;
    this.expected = expected;
    this.actual = actual;
  }
}

/** Which part of an entry made it too large, and how big each part is. */
export interface EntrySizes {
  /** The part that is over the limit or, when neither is alone, the larger one. */
  part: "request" | "response";
  /** Bytes of the manifest: the normalized prompt, task, params… */
  requestBytes: number;
  /** Bytes of the response (for a stream: what had arrived when recording stopped). */
  responseBytes: number;
  /** For a stream: the events that had arrived when it passed the limit. */
  streamEvents?: number;
}

/**
 * An entry is larger than the recorder's `maxEntryBytes`: it is refused
 * whole, never truncated. `part` says whether the request (the prompt) or
 * the response is what is large; `value` holds the live response.
 */
export class EntryTooLargeError extends InvocacheError {
  readonly id: string;
  readonly bytes: number;
  readonly limit: number;
  readonly value: unknown;
  /** `"request"` when the prompt (the manifest) is what is large, else `"response"`. */
  readonly part: "request" | "response";
  readonly requestBytes: number | undefined;
  readonly responseBytes: number | undefined;

  constructor(id: string, bytes: number, limit: number, value: unknown, sizes?: EntrySizes) {
    const part = sizes?.part ?? "response";
    const short = id.slice(0, 12);
    const what =
      sizes?.streamEvents !== undefined
        ? `the streamed response of ${short} passed the ${limit}-byte entry limit after ${sizes.streamEvents} events (${bytes} bytes so far); recording stopped there and the live stream went on`
        : part === "request"
          ? `the request of ${short} is what is large: its manifest (prompt, task, params) is ${sizes?.requestBytes} bytes and its response ${sizes?.responseBytes}, ${bytes} bytes in all, over the ${limit}-byte entry limit`
          : `the response of ${short} is ${sizes?.responseBytes ?? bytes} bytes${sizes === undefined ? "" : ` (${bytes} with its ${sizes.requestBytes}-byte manifest)`}, over the ${limit}-byte entry limit`;
    super(
      "ERR_ENTRY_TOO_LARGE",
      `invocache: ${what}; it was not recorded (never truncated). Raise createRecorder({ maxEntryBytes }) if it should be.`,
    );
    this.id = id;
    this.bytes = bytes;
    this.limit = limit;
    this.value = value;
    this.part = part;
    this.requestBytes = sizes?.requestBytes;
    this.responseBytes = sizes?.responseBytes;
  }
}

/** `recorder.verdict()` was given an id this recorder never served. */
export class UnknownInvocationError extends InvocacheError {
  readonly id: string;
  constructor(id: string, message: string) {
    super("ERR_UNKNOWN_INVOCATION", message);
    this.id = id;
  }
}

/**
 * A recording older than the recorder's `maxAge`, read with `onStale:
 * "error"`. Thrown in every mode: a fixture that is out of date is not an
 * outage to call around. The fix is to re-record it, or to raise `maxAge`.
 *
 * @example
 * createRecorder({ store, maxAge: "30d", onStale: "error" }) // a 40-day-old hit: StaleEntryError
 */
export class StaleEntryError extends InvocacheError {
  /** The store the entry is in (`store.url`). */
  readonly store: string;
  /** The entry's store key. */
  readonly key: string;
  /** When it was recorded (ISO 8601). */
  readonly recordedAt: string;
  /** The `maxAge` it is older than, as given. */
  readonly maxAge: number | string;

  constructor(store: string, key: string, recordedAt: string, maxAge: number | string) {
    super(
      "ERR_STALE_ENTRY",
      `invocache: ${store}: entry ${key} was recorded at ${recordedAt}, more than maxAge (${String(maxAge)}) ago. ` +
        "Re-record it with INVOCACHE_MODE=record, or raise maxAge.",
    );
    this.store = store;
    this.key = key;
    this.recordedAt = recordedAt;
    this.maxAge = maxAge;
  }
}

// Errors of tool calls (issue 13). Each names the tool and what to do, and
// each means nothing was stored.

/** A tool threw, was aborted, or its server failed mid-call: nothing was recorded. */
export class ToolCallError extends InvocacheError {
  readonly tool: string;
  constructor(tool: string, message: string, cause: unknown) {
    super("ERR_TOOL_CALL", message, { cause });
    this.tool = tool;
  }
}

/** A tool returned something that cannot be recorded (not JSON). */
export class ToolResultError extends InvocacheError {
  readonly tool: string;
  constructor(tool: string, message: string, cause?: unknown) {
    super("ERR_TOOL_RESULT", message, cause === undefined ? undefined : { cause });
    this.tool = tool;
  }
}

/** A live tool result differs from its recording while the model is strictly replayed. */
export class ToolDivergenceError extends InvocacheError {
  readonly tool: string;
  readonly id: string;
  readonly occurrence: number;
  readonly diffs: readonly ValueDiff[];
  constructor(tool: string, id: string, occurrence: number, diffs: readonly ValueDiff[]) {
    super(
      "ERR_TOOL_DIVERGENCE",
      `invocache: tool ${JSON.stringify(tool)} (${id.slice(0, 12)}, occurrence ${occurrence}) answered differently than when it was recorded, ` +
        `while the model is replayed; the replayed model would see an answer it never saw. Differs in:\n${formatDiffs(diffs)}\n` +
        'Re-record with INVOCACHE_MODE=record if the tool changed on purpose, or replay the tool too (mode: { tool: "replay" }).',
    );
    this.tool = tool;
    this.id = id;
    this.occurrence = occurrence;
    this.diffs = diffs;
  }
}
