/**
 * The tee of a live stream: each upstream event goes to the reader at once
 * (through its channel, stream-channel.ts) and into the recording. The
 * recording is whole only when the upstream ends cleanly; a reader that
 * stops closes the upstream and fails the call (nothing stored), unless
 * the call's `isComplete` already accepts what was read (then it is kept).
 * Past the entry limit buffering stops and `StreamTooLarge` is thrown, while
 * the reader still gets every event live.
 */
import type { JsonValue } from "../store/index.js";
import type { Channel } from "./stream-channel.js";
import { StreamTooLarge } from "./stream-limit.js";
import type { RecordedStream } from "./types.js";

const STOP = Symbol("stop");
const KEPT = Symbol("kept");

/** The recording as read so far, and whether it was kept whole when its reader left. */
export type SoFar<H extends JsonValue, E extends JsonValue> = {
  recording?: RecordedStream<H, E>;
  kept: boolean;
  /** Set by the recording loop: ends it at once when the recording is kept. */
  keep?: () => void;
};

/**
 * Read the upstream events into the channel (the reader gets them live) and
 * into the recording. Past `limit`, buffering stops: the rest goes to the
 * reader live (`giveUp` receives that pump) and `StreamTooLarge` is thrown,
 * so nothing is stored. The reader stopping closes the upstream and fails.
 */
export async function recordEvents<H extends JsonValue, E extends JsonValue>(
  head: H,
  headAt: number,
  events: AsyncIterable<E>,
  signal: AbortSignal,
  sofar: SoFar<H, E>,
  channel: Channel<E>,
  limit: number,
  giveUp: (rest: Promise<void>) => void,
): Promise<RecordedStream<H, E>> {
  const started = performance.now();
  const upstream = events[Symbol.asyncIterator]();
  const stopped = new Promise<typeof STOP>((resolve) => {
    if (signal.aborted) resolve(STOP);
    else signal.addEventListener("abort", () => resolve(STOP), { once: true });
  });
  const kept = new Promise<typeof KEPT>((resolve) => {
    sofar.keep = () => resolve(KEPT);
  });
  /** The next event, or STOP/KEPT as soon as the reader leaves (even while a read is pending). */
  const next = async (): Promise<IteratorResult<E> | typeof STOP | typeof KEPT> => {
    const pending = upstream.next();
    pending.catch(() => {}); // abandoned on STOP: its failure has nowhere to go
    return Promise.race([pending, stopped, kept]);
  };
  const close = () => {
    Promise.resolve()
      .then(() => upstream.return?.())
      .catch(() => {});
  };
  const out: { t: number; data: E }[] = [];
  const recording: RecordedStream<H, E> = { kind: "stream", head, headAt, events: out };
  sofar.recording = recording;
  // Estimated size of the recording so far: the head and each event as stored.
  let bytes = jsonBytes(head) + 64;
  for (;;) {
    let r: IteratorResult<E>;
    try {
      r = await pull(next, close, signal);
    } catch (error) {
      // Kept whole as the reader left; the upstream's abort may land first.
      if (sofar.kept) return recording;
      throw error;
    }
    if (r.done) break;
    const data = r.value;
    channel.push(data);
    bytes += jsonBytes(data) + 24;
    if (bytes > limit) {
      // Stop buffering now; the reader gets the rest live, nothing is stored.
      giveUp(pumpLive(next, close, channel, signal));
      throw new StreamTooLarge(bytes, out.length + 1, { kind: "stream", head, events: [] });
    }
    out.push({ t: Math.round((performance.now() - started) * 10) / 10, data });
  }
  return recording;
}

/** Read the rest of an upstream into the channel without keeping it (recording was given up). */
async function pumpLive<E>(
  next: () => Promise<IteratorResult<E> | typeof STOP | typeof KEPT>,
  close: () => void,
  channel: Channel<E>,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    const r = await pull(next, close, signal);
    if (r.done) return;
    channel.push(r.value);
  }
}

/**
 * The upstream's next event; on its failure or the caller's abort, close it
 * and throw; when the recording was kept as the reader left, close it and end.
 */
async function pull<E>(
  next: () => Promise<IteratorResult<E> | typeof STOP | typeof KEPT>,
  close: () => void,
  signal: AbortSignal,
): Promise<IteratorResult<E>> {
  let r: IteratorResult<E> | typeof STOP | typeof KEPT;
  try {
    r = await next();
  } catch (error) {
    close();
    throw error;
  }
  if (r === STOP) {
    close();
    throw signal.reason;
  }
  if (r === KEPT) {
    close();
    return { done: true, value: undefined };
  }
  return r;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "");
}
