/**
 * A streamed call, through the same call pipeline as every call
 * (`recorder.call`), so every replay rule (modes, occurrences,
 * single-flight, leases, never storing failures) applies unchanged. The
 * call's `fn` opens the upstream and tees it (stream-tee.ts): on a miss the
 * caller reads events live (stream-channel.ts) while they are recorded; the
 * recording is stored only when the upstream stream ends cleanly and is
 * complete. On a hit the recording (recorded-stream.ts) is replayed in
 * order (stream-replay.ts), as fast as possible or with its recorded timing
 * scaled by `replaySpeed`: the time to the head, then each event's time
 * after it.
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
import { isRecordedStream } from "./recorded-stream.js";
import { resolveReplaySpeed } from "./replay-speed.js";
import { Channel } from "./stream-channel.js";
import { replayStream } from "./stream-replay.js";
import { recordEvents, type SoFar } from "./stream-tee.js";
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
  const { head, events } = await replayStream<H, E>(value, speed, callStarted, opts.signal);
  return {
    head,
    events,
    // Per call (onServed), never the shared recorder.last: exact under concurrency.
    hit: served?.hit ?? true,
  };
}
