/**
 * Replaying a recorded stream: the head after its recorded time (`headAt`),
 * then each event at its recorded time after the head (`t`), both scaled by
 * `replaySpeed` (replay-speed.ts: 0 waits for nothing). The caller's signal
 * stops the replay.
 */
import { sleep } from "./abortable.js";
import { replayWait } from "./replay-speed.js";
import type { RecordedStream } from "./types.js";

/**
 * The head and events of `recording`, served with its timing at `speed`:
 * waits the head's recorded time (less what the call already took since
 * `callStarted`), then returns events that keep their own.
 */
export async function replayStream<H, E>(
  recording: RecordedStream,
  speed: number,
  callStarted: number,
  signal: AbortSignal | undefined,
): Promise<{ head: H; events: AsyncGenerator<E> }> {
  // The recorded time to the head, scaled (0 when not recorded or at speed 0).
  await sleep(replayWait(recording.headAt, speed, performance.now() - callStarted), signal);
  return {
    head: recording.head as H,
    events: replay(recording.events as { t?: number; data: E }[], speed, signal),
  };
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
