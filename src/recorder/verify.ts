/**
 * The verify step (docs/recorder.md, "The call pipeline"): in verify mode a
 * call goes live and is compared with the recording, writing nothing. The
 * recording is read before the call goes upstream (a malformed cassette is
 * an error before anything is paid for); the pipeline calls upstream
 * between the two halves of this step.
 * Like with like: the recording was redacted before it was stored, so the
 * live value is redacted the same way; key order is not a difference, nor a
 * stream's timing.
 * A tool call's divergence lists the differing paths of its result, and is
 * an error while the model is strictly replayed (the run is then a test of
 * the tools against a fixed model: a changed tool result fails it).
 */

import { callKindNamed } from "../identity/internal.js";
import { diffJson, jsonEqual } from "../json/index.js";
import type { JsonValue } from "../store/index.js";
import { validateEntry } from "../store/index.js";
import { countResponseDivergence } from "./call-events.js";
import type { Upstream } from "./core.js";
import { type Answer, type CallContext, type Core, storable, TRUSTED } from "./core.js";
import { ToolDivergenceError } from "./errors.js";
import { withoutTiming } from "./recorded-stream.js";

/** What verifying reads: the store, redaction, the counters, and whether the model is strictly replayed. */
export type VerifyDeps = Pick<Core, "store" | "failOpen" | "secrets" | "stats" | "events" | "mode">;

/** The recording to compare with, read before the call goes upstream (undefined: none, or the store failed). */
export async function readRecording(
  deps: VerifyDeps,
  c: CallContext,
): Promise<JsonValue | undefined> {
  try {
    return await deps.store.get(c.key);
  } catch (error) {
    deps.failOpen.storeFailed(
      `store ${deps.store.url} failed on read; nothing to verify against`,
      error,
      c.id,
    );
    return undefined;
  }
}

/** Compare the live answer (`got`) with the recording read before it (`raw`). */
export function compareWithRecording(
  deps: VerifyDeps,
  c: CallContext,
  raw: JsonValue | undefined,
  got: Upstream,
): Answer {
  const { value } = got;
  if (got.kind === "live") return { value, hit: false, live: true };
  if (got.kind === "too-large") {
    deps.failOpen.warn(
      `the stream of ${c.id.slice(0, 12)} passed the entry limit; it was not compared with the recording`,
      undefined,
      c.id,
    );
    return { value, hit: false };
  }
  const recorded =
    raw === undefined
      ? undefined
      : validateEntry(raw, `${deps.store.url} ${c.key}`, TRUSTED).response;
  const actual = storable(deps, value as JsonValue);
  // A stream's timing is not its answer: only its head and events are compared.
  const differs =
    recorded === undefined
      ? actual !== undefined
      : !jsonEqual(withoutTiming(recorded) as JsonValue, withoutTiming(actual) as JsonValue);
  if (differs) {
    const spec = callKindNamed(c.kind);
    const fields = spec.diffsResponses ? diffJson(recorded, actual) : undefined;
    countResponseDivergence(deps, c, recorded ?? null, actual, fields);
    if (fields !== undefined && deps.mode === "replay") {
      throw new ToolDivergenceError(spec.callee(c.manifest), c.id, c.occurrence, fields);
    }
    return { value, hit: false, divergence: "response" };
  }
  return { value, hit: false };
}
