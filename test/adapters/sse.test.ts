/** The SSE parser: any chunking of any stream re-emits the same bytes, event by event. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatSse, parseBlock, type SseEvent, SseParser } from "../../src/adapters/index.js";

const encoder = new TextEncoder();

/** Parse `text` fed in the given byte-chunks. */
function parse(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const parser = new SseParser();
  const out: SseEvent[] = [];
  let last = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(...parser.push(bytes.slice(last, cut)));
    last = cut;
  }
  out.push(...parser.push(bytes.slice(last)), ...parser.end());
  return out;
}

const SAMPLE = [
  'data: {"id":"c1","choices":[{"delta":{"content":"héllo 👋"}}]}\n\n',
  'event: message_start\ndata: {"type":"message_start"}\n\n',
  ": keep-alive comment\n\n",
  "data: line one\ndata: line two\n\n",
  'event: x\r\ndata: {"a": 1}\r\n\r\n', // CRLF and a space inside the JSON: kept raw
  "id: 7\nretry: 1500\ndata:no-space\n\n",
  "data: [DONE]\n\n",
].join("");

describe("SSE recording", () => {
  it("keeps readable fields: data as JSON when exact, text otherwise", () => {
    const events = parse(encoder.encode(SAMPLE), []);
    expect(events[0]).toEqual({
      json: { id: "c1", choices: [{ delta: { content: "héllo 👋" } }] },
    });
    expect(events[1]).toEqual({ event: "message_start", json: { type: "message_start" } });
    expect(events[2]).toEqual({ raw: ": keep-alive comment\n\n" });
    expect(events[3]).toEqual({ data: "line one\nline two" });
    expect(events[4]?.raw).toBe('event: x\r\ndata: {"a": 1}\r\n\r\n');
    expect(events[5]).toMatchObject({ id: "7", retry: 1500, data: "no-space" });
    expect(events[6]).toEqual({ data: "[DONE]" });
    expect(events.map(formatSse).join("")).toBe(SAMPLE);
  });

  it("re-emits the exact bytes for any chunking (multi-byte characters and CRLF split included)", () => {
    const bytes = encoder.encode(`${SAMPLE}data: trailing without blank line`);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 12 }),
        (cuts) => {
          const events = parse(bytes, cuts);
          expect(events.map(formatSse).join("")).toBe(new TextDecoder().decode(bytes));
          expect(events).toHaveLength(8);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("parses field lines per the spec", () => {
    expect(parseBlock("event:ping\ndata\n\n")).toMatchObject({ event: "ping", data: "" });
    expect(parseBlock("id: a\0b\ndata: x\n\n").id).toBeUndefined();
    expect(parseBlock("retry: soon\ndata: x\n\n").retry).toBeUndefined();
  });
});
