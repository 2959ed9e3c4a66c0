/**
 * Streaming responses on top of `recorder.call`, so every replay rule (modes,
 * occurrences, single-flight, leases, never storing failures) applies
 * unchanged. On a miss the caller reads events live while they are recorded;
 * the recording is stored only when the upstream stream ends cleanly and is
 * complete. On a hit the recorded events are replayed in order, as fast as
 * possible or with their recorded timing scaled by `replaySpeed`
 * (replay-speed.ts): the time to the head, then each event's time after it.
 *
 * A reader that stops (breaks out of its loop, calls `return()`) stops the
 * upstream: nothing more is pulled, the upstream iterator is closed and the
 * signal given to `fn` aborts; the cut-off stream is not recorded. A reader
 * that leaves once the call's `isComplete` accepts what was read (a client
 * closing on `[DONE]` while the upstream lingers) leaves a whole answer: the
 * upstream is closed and the recording kept. A stream
 * that grows past the recorder's `maxEntryBytes` stops being buffered at
 * that point and is not recorded, while the reader still gets every event.
 */
import type { InvocationRequest } from "../identity/index.js";
import type { JsonValue } from "../store/index.js";
import { answerLive, Live } from "./live.js";
import { replayWait, resolveReplaySpeed, sleep } from "./replay-speed.js";
import { StreamTooLarge } from "./stream-limit.js";
import type {
  LiveStreamResult,
  RecordedStream,
  Recorder,
  ServedInfo,
  StreamOpened,
  StreamOptions,
  StreamResult,
  StreamStart,
} from "./types.js";

export type { RecordedStream, StreamOptions, StreamResult, StreamStart } from "./types.js";

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

/**
 * Record or replay a streaming call. `fn` opens the upstream stream and
 * resolves to its head and an async iterable of JSON events.
 *
 * @example
 * const { head, events } = await streamCall(recorder, req, async () => ({
 *   head: { status: 200 },
 *   events: sseEvents(await fetch(url, init)),
 * }));
 * for await (const e of events) process(e);
 */
export async function streamCall<H extends JsonValue, E extends JsonValue, L = never>(
  recorder: Pick<Recorder, "call" | "maxEntryBytes">,
  req: InvocationRequest,
  fn: (start: StreamStart) => Promise<StreamOpened<H, E> | Live<L>>,
  opts: StreamOptions = {},
): Promise<StreamResult<H, E> | LiveStreamResult<L>> {
  if (typeof fn !== "function")
    throw new TypeError("recorder.stream: fn must be an async function");
  const { timing, replaySpeed, ...callOpts } = opts;
  const speed = resolveReplaySpeed(replaySpeed, timing, "recorder.stream");
  const callStarted = performance.now();
  const limit = recorder.maxEntryBytes;
  // The reader stopping (or the caller aborting) aborts this: the upstream is
  // closed and the call fails (a cut-off stream is never recorded;
  // single-flight followers take over) — unless the final event is already
  // in: then the recording so far is whole, and it is kept.
  const stop = new AbortController();
  const signal = stop.signal;
  const sofar: SoFar<H, E> = { kept: false };
  const leave = (reason: unknown) => {
    if (stop.signal.aborted || sofar.kept) return;
    // A client that closes on `[DONE]` while the upstream lingers has read a
    // whole answer. Only the call's own completeness check can say so.
    if (sofar.recording !== undefined && callOpts.isComplete?.(sofar.recording) === true) {
      sofar.kept = true;
      sofar.keep?.();
    } else stop.abort(reason);
  };
  const caller = callOpts.signal;
  const onCallerAbort = () => leave(caller?.reason);
  if (caller?.aborted) stop.abort(caller.reason);
  else caller?.addEventListener("abort", onCallerAbort, { once: true });
  const channel = new Channel<E>(() =>
    leave(new DOMException("the reader stopped reading the stream", "AbortError")),
  );
  let announceLive!: (head: H) => void;
  const live = new Promise<H>((resolve) => {
    announceLive = resolve;
  });
  /** Set when recording was given up: the rest of the upstream, live only. */
  let rest: Promise<void> | undefined;
  let served: ServedInfo | undefined;

  /** Set when `fn` answered live (answerLive): handed back, never stored. */
  let answeredLive = false;
  const settled = recorder.call<RecordedStream<H, E> | L>(
    req,
    async () => {
      // Times are kept from here: the head's from the upstream call's start.
      const started = performance.now();
      const opened = await fn({ signal });
      if (Live.is(opened)) {
        answeredLive = true;
        return answerLive(opened.value as L);
      }
      const { head, events } = opened;
      announceLive(head);
      const headAt = Math.round((performance.now() - started) * 10) / 10;
      return recordEvents(head, headAt, events, signal, sofar, channel, limit, (r) => {
        rest = r;
      });
    },
    {
      ...callOpts,
      signal,
      onServed: (info) => {
        served = info;
        callOpts.onServed?.(info);
      },
    },
  );
  // The live path ends (or fails) when the call settles: after storing, so a
  // write error in record mode still reaches the reader; when recording was
  // given up, after the rest of the stream was read.
  const after = (then: () => void) => {
    if (rest === undefined) then();
    else rest.then(then, (error: unknown) => channel.fail(error));
  };
  settled.finally(() => caller?.removeEventListener("abort", onCallerAbort)).catch(() => {});
  settled.then(
    () => after(() => channel.end()),
    (error: unknown) => after(() => channel.fail(error)),
  );

  const answered = settled.then((value) => ({ live: false as const, value }));
  answered.catch(() => {}); // once live, errors reach the reader through the channel
  const first = await Promise.race([
    live.then((head) => ({ live: true as const, head })),
    answered,
  ]);
  if (first.live) return { head: first.head, events: channel, hit: false };

  const value = first.value;
  if (answeredLive) return { live: value as L, hit: false };
  if (!isRecordedStream(value)) {
    throw new TypeError(
      "recorder.stream: the recording for this identity is not a stream (it was recorded with recorder.call); re-record it with INVOCACHE_MODE=record",
    );
  }
  // The recorded time to the head, scaled (0 when not recorded or at speed 0).
  await sleep(replayWait(value.headAt, speed, performance.now() - callStarted), opts.signal);
  return {
    head: value.head as H,
    events: replay(value.events as { t?: number; data: E }[], speed, opts.signal),
    // Per call (onServed), never the shared recorder.last: exact under concurrency.
    hit: served?.hit ?? true,
  };
}

const STOP = Symbol("stop");
const KEPT = Symbol("kept");

/** The recording as read so far, and whether it was kept whole when its reader left. */
type SoFar<H extends JsonValue, E extends JsonValue> = {
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
async function recordEvents<H extends JsonValue, E extends JsonValue>(
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

function replay<E>(
  events: { t?: number; data: E }[],
  speed: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<E> {
  // Event times are after the head, which the caller has now: the clock starts here.
  const headServed = performance.now();
  return (async function* () {
    for (const e of events) {
      signal?.throwIfAborted();
      await sleep(replayWait(e.t, speed, performance.now() - headServed), signal);
      yield e.data;
    }
  })();
}

/**
 * A single-consumer async queue: the producer never waits for the reader.
 * When the reader stops (`return()`, also while a `next()` is pending),
 * `onStop` runs and later items are dropped.
 */
class Channel<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #read = 0;
  #done = false;
  #stopped = false;
  #error: { error: unknown } | undefined;
  #wake: (() => void) | undefined;
  readonly #onStop: () => void;

  constructor(onStop: () => void) {
    this.#onStop = onStop;
  }

  push(item: T): void {
    if (this.#stopped) return;
    this.#items.push(item);
    this.#notify();
  }
  end(): void {
    this.#done = true;
    this.#notify();
  }
  fail(error: unknown): void {
    this.#error = { error };
    this.#done = true;
    this.#notify();
  }
  #notify(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#items.length = 0;
    this.#read = 0;
    if (!this.#done) this.#onStop();
    this.#notify();
  }

  async #next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.#stopped) return { done: true, value: undefined };
      if (this.#read < this.#items.length) {
        const item = this.#items[this.#read] as T;
        this.#items[this.#read++] = undefined as T; // let consumed events be collected
        if (this.#read > 1024 && this.#read * 2 > this.#items.length) {
          this.#items.splice(0, this.#read);
          this.#read = 0;
        }
        return { done: false, value: item };
      }
      if (this.#done) {
        if (this.#error !== undefined) throw this.#error.error;
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.#next(),
      return: async () => {
        this.#stop();
        return { done: true, value: undefined };
      },
      throw: async (error: unknown) => {
        this.#stop();
        throw error;
      },
    };
  }
}
