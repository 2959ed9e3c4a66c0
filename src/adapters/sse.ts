/**
 * Server-sent events (WHATWG HTML §9.2 "Server-sent events", the
 * `text/event-stream` format) as recorded events: each event block becomes one
 * JSON event that reads well in a cassette (`data` parsed as JSON when that
 * is exact) and re-emits byte for byte: when the standard spelling of the
 * parsed event differs from what the server sent (comments, field order,
 * `data:` without a space, CRLF line ends…), the block's text is kept in
 * `raw` and replayed instead.
 */
import type { JsonValue } from "../store/types.js";

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
 *
 * @example
 * const parser = new SseParser();
 * parser.push(new TextEncoder().encode("data: [DO")); // []
 * parser.push(new TextEncoder().encode("NE]\n\n")); // [{ data: "[DONE]" }]
 */
export class SseParser {
  #buf = "";
  /** Where the scan for the end of the current block resumes. */
  #scan = 0;
  readonly #decoder = new TextDecoder();

  /** Feed bytes; returns the blocks they completed. */
  push(chunk: Uint8Array): SseEvent[] {
    this.#buf += this.#decoder.decode(chunk, { stream: true });
    return this.#blocks(false);
  }

  /** End of stream: the blocks left, a trailing unterminated one included. */
  end(): SseEvent[] {
    this.#buf += this.#decoder.decode();
    const out = this.#blocks(true);
    if (this.#buf !== "") out.push(parseBlock(this.#buf));
    this.#buf = "";
    this.#scan = 0;
    return out;
  }

  #blocks(final: boolean): SseEvent[] {
    const out: SseEvent[] = [];
    const buf = this.#buf;
    let start = 0;
    let pos = this.#scan;
    for (;;) {
      const line = lineAt(buf, pos, final);
      if (line === undefined) break;
      if (line.end === pos) {
        // An empty line ends the block.
        out.push(parseBlock(buf.slice(start, line.next)));
        start = line.next;
      }
      pos = line.next;
    }
    this.#buf = buf.slice(start);
    this.#scan = pos - start;
    return out;
  }
}

/** The line starting at `pos`: where its text ends and the next line starts. */
function lineAt(
  buf: string,
  pos: number,
  final: boolean,
): { end: number; next: number } | undefined {
  for (let i = pos; i < buf.length; i++) {
    const c = buf.charCodeAt(i);
    if (c === 10) return { end: i, next: i + 1 };
    if (c === 13) {
      if (i + 1 < buf.length) return { end: i, next: buf.charCodeAt(i + 1) === 10 ? i + 2 : i + 1 };
      return final ? { end: i, next: i + 1 } : undefined;
    }
  }
  return undefined;
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
