/**
 * The SSE parser: any chunking of any stream re-emits the same bytes, event
 * by event; a half-sent final event is dropped (never recorded, never
 * replayed); a huge line costs linear time (the 64 MB case runs with
 * INVOCACHE_HEAVY=1).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFetch,
  formatSse,
  parseBlock,
  type SseEvent,
  SseParser,
} from "../../src/adapters/index.js";
import { createRecorder } from "../../src/index.js";

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
    const bytes = encoder.encode(SAMPLE);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 12 }),
        (cuts) => {
          const events = parse(bytes, cuts);
          expect(events.map(formatSse).join("")).toBe(SAMPLE);
          expect(events).toHaveLength(7);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("discards a half-sent final event (no blank line after it), however the stream is cut", () => {
    for (const tail of [
      "data: trailing without blank line",
      "data: trailing with one line end\n",
      "data: trailing with CR\r",
      'event: x\r\ndata: {"half":',
      ": a comment, unterminated",
    ]) {
      const bytes = encoder.encode(SAMPLE + tail);
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 12 }),
          (cuts) => {
            const events = parse(bytes, cuts);
            expect(events.map(formatSse).join(""), tail).toBe(SAMPLE);
            expect(events).toHaveLength(7);
          },
        ),
        { numRuns: 100 },
      );
    }
  });

  it("parses a long data line cut into many chunks, and CR/CRLF line ends at chunk edges", () => {
    const line = "x".repeat(1 << 20);
    const text = `data: ${line}\r\n\r\ndata: b\r\rdata: c\n\n`;
    const bytes = encoder.encode(text);
    const cuts: number[] = [];
    for (let at = 16 * 1024; at < bytes.length; at += 16 * 1024) cuts.push(at);
    // Also a cut between every CR and LF of the tail.
    for (let at = bytes.length - 30; at < bytes.length; at++) cuts.push(at);
    const events = parse(bytes, cuts);
    expect(events).toHaveLength(3);
    expect(events[0]?.data).toBe(line);
    expect(events[1]?.data).toBe("b");
    expect(events[2]).toEqual({ data: "c" });
    expect(events.map(formatSse).join("")).toBe(text);
  });

  it("parses field lines per the spec", () => {
    expect(parseBlock("event:ping\ndata\n\n")).toMatchObject({ event: "ping", data: "" });
    expect(parseBlock("id: a\0b\ndata: x\n\n").id).toBeUndefined();
    expect(parseBlock("retry: soon\ndata: x\n\n").retry).toBeUndefined();
  });
});

describe("a half-sent final SSE event through createFetch", () => {
  const COMPLETE = [
    'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    "data: [DONE]\n\n",
  ].join("");
  const HALF = 'data: {"choices":[{"index":0,"delta":{"content":"HALF-SENT';
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Sends the complete events, then half an event, then ends the response.
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(COMPLETE);
        res.end(HALF);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("is neither passed on, recorded nor replayed", async () => {
    const auto = createRecorder({ store: "memory://", mode: "auto", env: {} });
    const replay = createRecorder({ store: auto.store, mode: "replay", env: {} });
    try {
      const init = {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          stream: true,
          messages: [{ role: "user", content: "x" }],
        }),
      };
      const live = await createFetch({ recorder: auto })(url, init);
      expect(await live.text()).toBe(COMPLETE);
      let stored = "";
      for await (const [, value] of auto.store.list("")) stored += JSON.stringify(value);
      expect(stored).toContain("finish_reason");
      expect(stored).not.toContain("HALF-SENT");
      const again = await createFetch({ recorder: replay })(url, init);
      expect(await again.text()).toBe(COMPLETE);
    } finally {
      await replay.close();
      await auto.close();
    }
  });
});

describe.skipIf(process.env.INVOCACHE_HEAVY !== "1")("SSE at scale (INVOCACHE_HEAVY=1)", () => {
  it("one 64 MB data line in 16 KiB chunks parses whole (the time is printed)", () => {
    const size = 64 * 1024 * 1024;
    const payload = encoder.encode(`data: ${"y".repeat(size)}\n\ndata: [DONE]\n\n`);
    const parser = new SseParser();
    const events: SseEvent[] = [];
    const started = performance.now();
    for (let at = 0; at < payload.length; at += 16 * 1024) {
      events.push(...parser.push(payload.subarray(at, at + 16 * 1024)));
    }
    events.push(...parser.end());
    const ms = performance.now() - started;
    expect(events).toHaveLength(2);
    expect(events[0]?.data?.length).toBe(size);
    expect(events[0]?.data === "y".repeat(size)).toBe(true);
    expect(events[1]).toEqual({ data: "[DONE]" });
    console.log(`SSE: one 64 MB data line in 16 KiB chunks parsed in ${Math.round(ms)} ms`);
  }, 120_000);
});
