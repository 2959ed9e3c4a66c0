/**
 * Streams through createFetch and the real `openai` SDK against a real SSE
 * server on 127.0.0.1 that answers after a known delay and sends chunks at
 * known gaps: recording tees each chunk to the caller as it arrives, the
 * entry keeps the timing, and `replaySpeed` replays it scaled.
 * Tolerance of every timed assertion: from 60 ms sooner (EARLY) to 120 ms
 * later (LATE) than scheduled: timers never fire early, but a busy machine
 * runs them late. The last chunk's windows at speed 1 and 2 do not overlap.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch } from "../../src/adapters/index.js";
import { InvalidOptionError, type Recorder } from "../../src/index.js";
import { entryPrefix, type JsonValue } from "../../src/store/index.js";
import { sqliteSandbox } from "./helpers.js";

const EARLY = 60;
const LATE = 120;
/** `actual` in [expected - EARLY, expected + LATE]. */
function within(actual: number, expected: number, what: string): void {
  expect(actual, what).toBeGreaterThanOrEqual(expected - EARLY);
  expect(actual, what).toBeLessThanOrEqual(expected + LATE);
}
/** The server answers (headers and first chunk) this long after the request… */
const HEAD_DELAY = 100;
/** …and sends the next chunks this long after the first. */
const CHUNK_AT = [0, 150, 300];

type Sandbox = Awaited<ReturnType<typeof sqliteSandbox>>;
let box: Sandbox;
let server: Server;
let url: string;
let calls = 0;
/** When set, the server holds its last chunk until this promise settles. */
let holdLast: Promise<void> | undefined;

const chunk = (i: number, last: boolean) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-fake",
    choices: [{ index: 0, delta: { content: `part${i} ` }, finish_reason: last ? "stop" : null }],
  })}\n\n`;

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(async () => {
  box = await sqliteSandbox();
  calls = 0;
  holdLast = undefined;
  server = createServer(async (req, res) => {
    for await (const _ of req) {
      // drain the request body
    }
    calls++;
    await wait(HEAD_DELAY);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const start = performance.now();
    for (const [i, at] of CHUNK_AT.entries()) {
      const last = i === CHUNK_AT.length - 1;
      if (last && holdLast !== undefined) await holdLast;
      else await wait(at - (performance.now() - start));
      res.write(chunk(i, last));
    }
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterEach(async () => {
  await box.cleanup();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(recorder: Recorder, replaySpeed?: number): OpenAI {
  const fetch = createFetch({ recorder, ...(replaySpeed === undefined ? {} : { replaySpeed }) });
  return new OpenAI({ apiKey: "sk-test-not-stored", baseURL: url, fetch, maxRetries: 0 });
}

/** Stream one call; the time of each chunk from the start of the call, ms. */
async function timedStream(openai: OpenAI): Promise<{ at: number[]; text: string }> {
  const t0 = performance.now();
  const stream = await openai.chat.completions.create({
    model: "gpt-fake",
    messages: [{ role: "user", content: "Stream the plan" }],
    stream: true,
  });
  const at: number[] = [];
  let text = "";
  for await (const c of stream) {
    at.push(performance.now() - t0);
    text += c.choices[0]?.delta.content ?? "";
  }
  return { at, text };
}

/** The stored entries, [key, value]. */
async function entries(recorder: Recorder): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  for await (const kv of recorder.store.list(entryPrefix(recorder.namespace))) out.push(kv);
  return out;
}

const gaps = (at: number[]) => at.slice(1).map((t, i) => t - (at[i] as number));

async function record(): Promise<{ at: number[]; text: string }> {
  const recorder = box.recorder("auto");
  const live = await timedStream(client(recorder));
  await recorder.close();
  expect(calls).toBe(1);
  return live;
}

describe("createFetch streams: tee while recording, timing on replay", () => {
  it("recording hands the first chunk to the caller before the upstream sends the last", async () => {
    let release!: () => void;
    holdLast = new Promise((r) => {
      release = r;
    });
    const openai = client(box.recorder("auto"));
    const stream = await openai.chat.completions.create({
      model: "gpt-fake",
      messages: [{ role: "user", content: "Stream the plan" }],
      stream: true,
    });
    const it = stream[Symbol.asyncIterator]();
    // Were the answer buffered whole, this read would wait forever (the server holds the last chunk).
    const first = await Promise.race([
      it.next(),
      wait(5_000).then(() => "buffered: no chunk before the upstream finished" as const),
    ]);
    expect(first).not.toBe("buffered: no chunk before the upstream finished");
    expect((first as IteratorResult<OpenAI.ChatCompletionChunk>).value.choices[0]?.delta).toEqual({
      content: "part0 ",
    });
    release();
    const rest: string[] = [];
    for (let r = await it.next(); r.done !== true; r = await it.next()) {
      rest.push(r.value.choices[0]?.delta.content ?? "");
    }
    expect(rest).toEqual(["part1 ", "part2 "]);
  });

  it("the entry keeps the time to the head and to each chunk", async () => {
    await record();
    const recorder = box.recorder("replay");
    const [, entry] = (await entries(recorder))[0]!;
    const response = (entry as { response: { headAt: number; events: { t: number }[] } }).response;
    within(response.headAt, HEAD_DELAY, "headAt");
    const ts = response.events.map((e) => e.t);
    expect(ts).toHaveLength(4); // three chunks and [DONE]
    for (const [i, at] of CHUNK_AT.entries()) within(ts[i] as number, at, `event ${i}`);
  });

  it("replaySpeed 1 reproduces the time to the first chunk and the gaps", async () => {
    const live = await record();
    const replayed = await timedStream(client(box.recorder("replay"), 1));
    expect(calls).toBe(1);
    expect(replayed.text).toBe(live.text);
    within(replayed.at[0] as number, HEAD_DELAY, "first chunk");
    const expected = gaps(CHUNK_AT);
    for (const [i, g] of gaps(replayed.at).entries()) within(g, expected[i] as number, `gap ${i}`);
    within(replayed.at.at(-1) as number, HEAD_DELAY + CHUNK_AT.at(-1)!, "last chunk");
  });

  it("replaySpeed 2 halves them; 0 (the default) does not wait", async () => {
    await record();
    const twice = await timedStream(client(box.recorder("replay"), 2));
    within(twice.at[0] as number, HEAD_DELAY / 2, "first chunk");
    const halved = gaps(CHUNK_AT).map((g) => g / 2);
    for (const [i, g] of gaps(twice.at).entries()) within(g, halved[i] as number, `gap ${i}`);
    within(twice.at.at(-1) as number, (HEAD_DELAY + CHUNK_AT.at(-1)!) / 2, "last chunk");
    const fast = await timedStream(client(box.recorder("replay")));
    // As recorded it takes HEAD_DELAY + 300 ms; with no waiting, far less.
    expect(fast.at.at(-1) as number).toBeLessThan(HEAD_DELAY + CHUNK_AT.at(-1)! - 150);
    expect(calls).toBe(1);
  });

  it("an entry recorded without timing replays at once, even at speed 1", async () => {
    await record();
    const recorder = box.recorder("auto");
    const [key, entry] = (await entries(recorder))[0]!;
    const e = entry as { response: { headAt?: number; events: { t?: number }[] } };
    delete e.response.headAt;
    for (const ev of e.response.events) delete ev.t;
    await recorder.store.set(key, entry as JsonValue);
    await recorder.close();
    const old = await timedStream(client(box.recorder("replay"), 1));
    expect(old.text).toBe("part0 part1 part2 ");
    expect(old.at.at(-1) as number).toBeLessThan(HEAD_DELAY + CHUNK_AT.at(-1)! - 150);
    expect(calls).toBe(1);
  });

  it("a bad replaySpeed is an InvalidOptionError naming the field", () => {
    const recorder = box.recorder("replay");
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "1", null]) {
      let error: unknown;
      try {
        createFetch({ recorder, replaySpeed: bad as number });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).field).toBe("replaySpeed");
      expect((error as Error).message).toContain("replaySpeed must be a finite number ≥ 0");
    }
    expect(() => createFetch({ recorder, replaySpeed: 0, timing: "recorded" })).toThrow(
      InvalidOptionError,
    );
    expect(() => createFetch({ recorder, timing: "fast" as "none" })).toThrow(/timing must be/);
    expect(() => createFetch({ recorder, replaySpeed: 1, timing: "recorded" })).not.toThrow();
  });
});
