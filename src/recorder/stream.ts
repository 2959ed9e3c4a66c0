/**
 * Streaming responses on top of `recorder.call`, so every replay rule (modes,
 * occurrences, single-flight, leases, never storing failures) applies
 * unchanged. On a miss the caller reads events live while they are recorded;
 * the recording is stored only when the upstream stream ends cleanly and is
 * complete. On a hit the recorded events are replayed in order, optionally
 * with their recorded timing.
 */
import type { InvocationRequest } from "../identity/manifest.js";
import type { JsonValue } from "../store/types.js";
import type { CallOptions, Recorder } from "./recorder.js";

/** How a stream is stored: the head (status, headers, ids…) and timed events. */
export interface RecordedStream<H extends JsonValue = JsonValue, E extends JsonValue = JsonValue> {
  kind: "stream";
  head: H;
  /** `t`: milliseconds since the head arrived, 0.1 ms resolution. */
  events: { t: number; data: E }[];
}

/** What {@link streamCall} resolves to. */
export interface StreamResult<H, E> {
  head: H;
  events: AsyncIterable<E>;
  /** Whether this was served from a recording. */
  hit: boolean;
}

/** Options of {@link streamCall}. */
export interface StreamOptions extends CallOptions {
  /** Replay as fast as possible (default) or with the recorded gaps between events. */
  timing?: "none" | "recorded";
}

/** Is a stored value a recorded stream? */
export function isRecordedStream(value: unknown): value is RecordedStream {
  const v = value as Partial<RecordedStream> | null;
  return (
    v !== null &&
    typeof v === "object" &&
    v.kind === "stream" &&
    "head" in v &&
    Array.isArray(v.events) &&
    v.events.every(
      (e) => e !== null && typeof e === "object" && typeof e.t === "number" && "data" in e,
    )
  );
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
export async function streamCall<H extends JsonValue, E extends JsonValue>(
  recorder: Recorder,
  req: InvocationRequest,
  fn: () => Promise<{ head: H; events: AsyncIterable<E> }>,
  opts: StreamOptions = {},
): Promise<StreamResult<H, E>> {
  if (typeof fn !== "function")
    throw new TypeError("recorder.stream: fn must be an async function");
  const { timing = "none", ...callOpts } = opts;
  if (timing !== "none" && timing !== "recorded") {
    throw new TypeError('stream timing must be "none" or "recorded"');
  }
  const channel = new Channel<E>();
  let announceLive!: (head: H) => void;
  const live = new Promise<H>((resolve) => {
    announceLive = resolve;
  });

  const settled = recorder.call<RecordedStream<H, E>>(
    req,
    async () => {
      const { head, events } = await fn();
      announceLive(head);
      const started = performance.now();
      const out: { t: number; data: E }[] = [];
      for await (const data of events) {
        out.push({ t: Math.round((performance.now() - started) * 10) / 10, data });
        channel.push(data);
      }
      return { kind: "stream", head, events: out };
    },
    callOpts,
  );
  // The live path ends (or fails) when the call settles: after storing, so a
  // write error in record mode still reaches the reader.
  settled.then(
    () => channel.end(),
    (error: unknown) => channel.fail(error),
  );

  const answered = settled.then((value) => ({ live: false as const, value }));
  answered.catch(() => {}); // once live, errors reach the reader through the channel
  const first = await Promise.race([
    live.then((head) => ({ live: true as const, head })),
    answered,
  ]);
  if (first.live) return { head: first.head, events: channel, hit: false };

  const value = first.value;
  if (!isRecordedStream(value)) {
    throw new TypeError(
      "recorder.stream: the recording for this identity is not a stream (it was recorded with recorder.call); re-record it with INVOCACHE_MODE=record",
    );
  }
  return {
    head: value.head as H,
    events: replay(value.events as { t: number; data: E }[], timing, opts.signal),
    hit: recorder.last?.hit ?? true,
  };
}

async function* replay<E>(
  events: { t: number; data: E }[],
  timing: "none" | "recorded",
  signal: AbortSignal | undefined,
): AsyncGenerator<E> {
  const started = performance.now();
  for (const e of events) {
    signal?.throwIfAborted();
    if (timing === "recorded") {
      const wait = e.t - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    yield e.data;
  }
}

/** A single-consumer async queue: the producer never waits for the reader. */
class Channel<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #read = 0;
  #done = false;
  #error: { error: unknown } | undefined;
  #wake: (() => void) | undefined;

  push(item: T): void {
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

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.#read < this.#items.length) {
        const item = this.#items[this.#read] as T;
        this.#items[this.#read++] = undefined as T; // let consumed events be collected
        yield item;
        continue;
      }
      if (this.#done) {
        if (this.#error !== undefined) throw this.#error.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }
}
