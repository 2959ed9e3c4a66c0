/**
 * Verify mode: call live and compare with the recording, writing nothing.
 * Like with like: the recording was redacted before it was stored, so the
 * live value is redacted the same way; key order is not a difference.
 */
import { validateEntry } from "../store/envelope.js";
import { jsonEqual } from "../store/json.js";
import type { JsonValue } from "../store/types.js";
import { type Answer, type CallContext, type Core, storable, TRUSTED } from "./core.js";
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
  if (recorded === undefined ? actual !== undefined : !jsonEqual(recorded, actual)) {
    core.stats.divergences++;
    core.events.emit("divergence", {
      kind: "response",
      id: c.id,
      occurrence: c.occurrence,
      expected: recorded ?? null,
      actual,
    });
    return { value, hit: false, divergence: "response" };
  }
  return { value, hit: false };
}
