/**
 * Verify mode: call live and compare with the recording, writing nothing.
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
import { type Answer, type CallContext, type Core, storable, TRUSTED } from "./core.js";
import { withoutTiming } from "./stream.js";
import { ToolDivergenceError } from "./tool-errors.js";
import { callUpstream } from "./upstream.js";

export async function verifyCall(core: Core, c: CallContext): Promise<Answer> {
  // Read first: a malformed cassette is an error before anything goes upstream.
  let raw: JsonValue | undefined;
  try {
    raw = await core.store.get(c.key);
  } catch (error) {
    core.failOpen.storeFailed(
      `store ${core.store.url} failed on read; nothing to verify against`,
      error,
      c.id,
    );
  }
  const got = await callUpstream(c.fn, c.opts.signal);
  const { value } = got;
  if (got.kind === "live") return { value, hit: false, live: true };
  if (got.kind === "too-large") {
    core.failOpen.warn(
      `the stream of ${c.id.slice(0, 12)} passed the entry limit; it was not compared with the recording`,
      undefined,
      c.id,
    );
    return { value, hit: false };
  }
  const recorded =
    raw === undefined
      ? undefined
      : validateEntry(raw, `${core.store.url} ${c.key}`, TRUSTED).response;
  const actual = storable(core, value as JsonValue);
  // A stream's timing is not its answer: only its head and events are compared.
  const differs =
    recorded === undefined
      ? actual !== undefined
      : !jsonEqual(withoutTiming(recorded) as JsonValue, withoutTiming(actual) as JsonValue);
  if (differs) {
    core.stats.divergences++;
    const spec = callKindNamed(c.kind);
    const fields = spec.diffsResponses ? diffJson(recorded, actual) : undefined;
    core.events.emit("divergence", {
      kind: "response",
      id: c.id,
      occurrence: c.occurrence,
      expected: recorded ?? null,
      actual,
      ...(fields === undefined ? {} : { fields }),
    });
    if (fields !== undefined && core.mode === "replay") {
      throw new ToolDivergenceError(spec.callee(c.manifest), c.id, c.occurrence, fields);
    }
    return { value, hit: false, divergence: "response" };
  }
  return { value, hit: false };
}
