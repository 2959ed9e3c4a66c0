/**
 * Calling upstream: the caller's `fn`, honouring its abort signal, and what
 * it got, said explicitly: a value, a live answer (live.ts) or a stream past
 * the entry limit (stream-limit.ts). An aborted call is an error, never a
 * result.
 */
import { Live } from "./live.js";
import { StreamTooLarge } from "./stream-limit.js";

/** What came back from upstream. */
export type Upstream =
  | { kind: "value"; value: unknown }
  /** `fn` answered with `answerLive`: hand back, never store. */
  | { kind: "live"; value: unknown }
  /** A stream past the entry limit: recording given up, the reader goes on live. */
  | { kind: "too-large"; value: unknown; limit: StreamTooLarge };

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

/** `p`, or a rejection with the signal's reason as soon as it aborts. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** Wait `ms`, or reject with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
