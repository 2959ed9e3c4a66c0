/**
 * The upstream step (docs/recorder.md, "The call pipeline"): the caller's
 * `fn`, honouring its abort signal, and what it got, said explicitly: a
 * value, a live answer (live.ts) or a stream past the entry limit
 * (stream-limit.ts). An aborted call is an error, never a result.
 */
import { untilAborted } from "./abortable.js";
import type { Upstream } from "./core.js";
import { Live } from "./live.js";
import { StreamTooLarge } from "./stream-limit.js";

/**
 * Call upstream, honouring the abort signal: it rejects when the signal
 * aborts even if `fn` does not listen to it (its late answer is dropped,
 * never stored).
 */
export async function callUpstream(
  fn: () => Promise<unknown>,
  signal: AbortSignal | undefined,
): Promise<Upstream> {
  signal?.throwIfAborted();
  let value: unknown;
  try {
    value = await untilAborted(fn(), signal);
  } catch (error) {
    if (!(error instanceof StreamTooLarge)) throw error;
    return { kind: "too-large", value: error.value, limit: error };
  }
  signal?.throwIfAborted();
  return Live.is(value) ? { kind: "live", value: value.value } : { kind: "value", value };
}

/**
 * The upstream time of a call that started at `started` (`performance.now()`),
 * in ms to the microsecond: the caller's `upstreamMs` when it gives one (an
 * answer fetched before `fn`, a cache's update: its own upstream time, not
 * fn's ~0 ms), else the time since `started`.
 */
export function upstreamMs(given: number | undefined, started: number): number {
  const ms =
    typeof given === "number" && Number.isFinite(given) && given >= 0
      ? given
      : performance.now() - started;
  return Math.round(ms * 1000) / 1000;
}
