/**
 * `--replay-speed` through the proxy: a stream recorded through the proxy
 * from a real SSE server on 127.0.0.1 (chunks at known gaps) replays with
 * those gaps divided by the speed, read by the real `openai` SDK. The proxy
 * hands `replaySpeed` to createFetch, so 1 is as recorded and 2 is twice as
 * fast (not merely "recorded" for any value above 0).
 * Each speed gets a window: no sooner than the gap it must keep less SLACK
 * (the first chunk can reach the proxy late while recording, which shortens
 * the recorded gap) and no later than that gap plus LATE (a loaded machine
 * delays timers). The windows of speed 1, 2 and 0 do not overlap, so a speed
 * served as another fails.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createProxy, type InvocacheProxy } from "../../src/proxy/index.js";
import { sqliteSandbox } from "../adapters/helpers.js";

/** How much shorter than the server's gap a recorded gap can be. */
const SLACK = 100;
/** How much later than its gap a replayed stream may end. */
const LATE = 200;
/** The last chunk leaves the server this long after the first. */
const CHUNK_AT = [0, 400, 800];

type Sandbox = Awaited<ReturnType<typeof sqliteSandbox>>;
let box: Sandbox;
let server: Server;
let upstream: string;
let calls = 0;
const open: InvocacheProxy[] = [];

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const chunk = (i: number, last: boolean) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-fake",
    choices: [{ index: 0, delta: { content: `part${i} ` }, finish_reason: last ? "stop" : null }],
  })}\n\n`;

beforeEach(async () => {
  box = await sqliteSandbox();
  calls = 0;
  server = createServer(async (req, res) => {
    for await (const _ of req) {
      // drain the request body
    }
    calls++;
    res.writeHead(200, { "content-type": "text/event-stream" });
    const start = performance.now();
    for (const [i, at] of CHUNK_AT.entries()) {
      await wait(at - (performance.now() - start));
      res.write(chunk(i, i === CHUNK_AT.length - 1));
    }
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
  await box.cleanup();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function proxy(mode: "auto" | "replay", replaySpeed?: number): Promise<InvocacheProxy> {
  const p = await createProxy({
    store: box.url,
    mode,
    env: {},
    upstreams: { openai: upstream },
    ...(replaySpeed === undefined ? {} : { replaySpeed }),
  });
  open.push(p);
  return p;
}

/** Stream one call through the proxy; the span from the first to the last chunk, ms. */
async function spread(p: InvocacheProxy): Promise<{ ms: number; text: string }> {
  const openai = new OpenAI({
    apiKey: "sk-test-not-stored",
    baseURL: `${p.url}/openai/v1`,
    maxRetries: 0,
  });
  const stream = await openai.chat.completions.create({
    model: "gpt-fake",
    messages: [{ role: "user", content: "count slowly" }],
    stream: true,
  });
  const at: number[] = [];
  let text = "";
  for await (const part of stream) {
    at.push(performance.now());
    text += part.choices[0]?.delta?.content ?? "";
  }
  return { ms: (at.at(-1) ?? 0) - (at[0] ?? 0), text };
}

describe("proxy --replay-speed", () => {
  it("replays a recorded stream with its gaps divided by the speed", async () => {
    const recorded = await spread(await proxy("auto"));
    expect(calls).toBe(1);
    expect(recorded.text).toBe("part0 part1 part2 ");
    const last = CHUNK_AT.at(-1) as number;

    const asRecorded = await spread(await proxy("replay", 1));
    const twice = await spread(await proxy("replay", 2));
    const fast = await spread(await proxy("replay"));
    expect(calls).toBe(1);
    for (const r of [asRecorded, twice, fast]) expect(r.text).toBe(recorded.text);

    // Windows: speed 1 [700, 1000], speed 2 [300, 600], speed 0 [0, 200].
    expect(asRecorded.ms).toBeGreaterThanOrEqual(last - SLACK);
    expect(asRecorded.ms).toBeLessThanOrEqual(last + LATE);
    expect(twice.ms).toBeGreaterThanOrEqual(last / 2 - SLACK);
    expect(twice.ms).toBeLessThanOrEqual(last / 2 + LATE);
    expect(fast.ms).toBeLessThanOrEqual(LATE);
  });
});
