/**
 * The signal a stream's recording function gives when the stream passed the
 * entry limit: the recorder gives up recording it (the caller sees an
 * `EntryTooLargeError` in record mode, a warning otherwise) while the reader
 * goes on reading live.
 */
import type { RecordedStream } from "./types.js";

/** Thrown by stream-tee.ts's recording loop past `maxEntryBytes` (internal). */
export class StreamTooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly events: number,
    readonly value: RecordedStream,
  ) {
    super(`the stream passed the entry limit at ${bytes} bytes after ${events} events`);
  }
}
