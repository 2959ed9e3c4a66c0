/**
 * Server-sent events (WHATWG HTML §9.2 "Server-sent events", the
 * `text/event-stream` format) as recorded events: each event block becomes one
 * JSON event that reads well in a cassette (`data` parsed as JSON when that
 * is exact) and re-emits byte for byte: when the standard spelling of the
 * parsed event differs from what the server sent (comments, field order,
 * `data:` without a space, CRLF line ends…), the block's text is kept in
 * `raw` and replayed instead.
 */
import type { JsonValue } from "../json/index.js";

/** One recorded SSE block. */
export type SseEvent = {
  /** The `event:` field. */
  event?: string;
  /** The `id:` field. */
  id?: string;
  /** The `retry:` field, in milliseconds. */
  retry?: number;
  /** The `data:` lines joined by "\n", when they are not exact JSON text. */
  data?: string;
  /** The `data:` text parsed as JSON, when `JSON.stringify` gives back exactly that text. */
  json?: JsonValue;
  /** The block exactly as received, only when {@link formatSse} would not give it back. */
  raw?: string;
};

/**
 * The text of an event block, blank line included: what was received.
 *
 * @example
 * formatSse({ event: "ping", json: { n: 1 } }) // 'event: ping\ndata: {"n":1}\n\n'
 */
export function formatSse(e: SseEvent): string {
  if (e.raw !== undefined) return e.raw;
  return standardText(e);
}

/**
 * The data text of an event, whether it was kept as JSON or as text.
 *
 * @example
 * sseData({ json: { a: 1 } }) // '{"a":1}'
 */
export function sseData(e: SseEvent): string | undefined {
  if (e.data !== undefined) return e.data;
  return "json" in e ? JSON.stringify(e.json) : undefined;
}

function standardText(e: SseEvent): string {
  let out = "";
  if (e.event !== undefined) out += `event: ${e.event}\n`;
  if (e.id !== undefined) out += `id: ${e.id}\n`;
  if (e.retry !== undefined) out += `retry: ${e.retry}\n`;
  const data = sseData(e);
  if (data !== undefined) for (const line of data.split("\n")) out += `data: ${line}\n`;
  return `${out}\n`;
}

/**
 * Incremental parser: feed bytes as they arrive, get complete event blocks.
 * A multi-byte character or a CRLF split across chunks waits for the next one.
 * Linear in the bytes fed, however they are cut: each chunk is scanned once
 * for line ends, and the pieces of an unfinished line are kept in a list and
 * joined once, when it ends (a single 64 MB `data:` line in 16 KiB chunks
 * costs what its bytes cost, not the square of its chunks).
 *
 * @example
 * const parser = new SseParser();
 * parser.push(new TextEncoder().encode("data: [DO")); // []
 * parser.push(new TextEncoder().encode("NE]\n\n")); // [{ data: "[DONE]" }]
 */
export class SseParser {
  /** The pieces of the line being read. */
  #line: string[] = [];
  /** The finished lines of the block being read, line ends included. */
  #block: string[] = [];
  /** The last chunk ended with CR: a LF first in the next one belongs to it. */
  #cr = false;
  readonly #decoder = new TextDecoder();

  /** Feed bytes; returns the blocks they completed. */
  push(chunk: Uint8Array): SseEvent[] {
    return this.#scan(this.#decoder.decode(chunk, { stream: true }));
  }

  /**
   * End of stream: the blocks the last bytes completed. An event that was
   * not ended by a blank line is discarded, as the standard says ("If the
   * file ends in the middle of an event, before the final empty line, the
   * incomplete event is not dispatched"): a half-sent event is never
   * recorded nor replayed.
   */
  end(): SseEvent[] {
    const out = this.#scan(this.#decoder.decode());
    if (this.#cr) {
      this.#cr = false;
      this.#endLine("\r", out);
    }
    this.#line = [];
    this.#block = [];
    return out;
  }

  #scan(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (this.#cr && text.length > 0) {
      this.#cr = false;
      const crlf = text.charCodeAt(0) === 10;
      this.#endLine(crlf ? "\r\n" : "\r", out);
      start = crlf ? 1 : 0;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (i > start) this.#line.push(text.slice(start, i));
      if (c === 13) {
        if (i + 1 === text.length) {
          // CR or CRLF? Only the next chunk can tell.
          this.#cr = true;
          return out;
        }
        if (text.charCodeAt(i + 1) === 10) {
          this.#endLine("\r\n", out);
          i++;
        } else {
          this.#endLine("\r", out);
        }
      } else {
        this.#endLine("\n", out);
      }
      start = i + 1;
    }
    if (start < text.length) this.#line.push(start === 0 ? text : text.slice(start));
    return out;
  }

  /** The current line ended with `eol`; an empty line ends the block. */
  #endLine(eol: string, out: SseEvent[]): void {
    const empty = this.#line.length === 0;
    // A loop, not push(...line): a line cut into millions of pieces would overflow the stack.
    for (const piece of this.#line) this.#block.push(piece);
    this.#block.push(eol);
    this.#line = [];
    if (!empty) return;
    out.push(parseBlock(this.#block.join("")));
    this.#block = [];
  }
}

/**
 * Parse one block (its text, blank line included) per the SSE field rules.
 *
 * @example
 * parseBlock('event: ping\ndata: {"n":1}\n\n') // { event: "ping", json: { n: 1 } }
 */
export function parseBlock(raw: string): SseEvent {
  const e: SseEvent = {};
  const data: string[] = [];
  for (const line of raw.split(/\r\n|\r|\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        e.event = value;
        break;
      case "data":
        data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) e.id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) e.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored (kept through `raw`)
    }
  }
  if (data.length > 0) {
    const text = data.join("\n");
    const json = exactJson(text);
    if (json === undefined) e.data = text;
    else e.json = json.value;
  }
  if (standardText(e) !== raw) e.raw = raw;
  return e;
}

function exactJson(text: string): { value: JsonValue } | undefined {
  const first = text.charCodeAt(0);
  // Only objects and arrays: "[DONE]" and bare words stay text.
  if (first !== 123 && first !== 91) return undefined;
  try {
    const value = JSON.parse(text) as JsonValue;
    return JSON.stringify(value) === text ? { value } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The events of an SSE body, one per block, as they arrive. Ends when the
 * body ends; a read error (abort, reset connection) is thrown.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(value);
    }
    finished = true;
    yield* parser.end();
  } finally {
    // Abandoned early: stop the upstream instead of leaving it open.
    if (finished) reader.releaseLock();
    else await reader.cancel().catch(() => {});
  }
}

/**
 * A byte stream that emits each event as one chunk, in order.
 * `onCancel` runs when the reader cancels (to stop the upstream).
 */
export function sseBody(
  events: AsyncIterable<SseEvent>,
  onCancel?: (reason: unknown) => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const it = events[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(formatSse(next.value)));
    },
    cancel(reason) {
      onCancel?.(reason);
      it.return?.().catch(() => {});
    },
  });
}
