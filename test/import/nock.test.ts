/**
 * nock.back (nock 14, its recorder) records real OpenAI and Anthropic SDK
 * calls against the fake provider on loopback; its fixture is imported, the
 * provider closed, and the same SDK calls replay through createFetch with no
 * upstream call.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { importSandbox } from "./helpers.js";

const KEY = `sk-live-${"5e1b2d".repeat(6)}-do-not-store`;

/** Every call the test makes, through `fetch`. */
async function calls(baseURL: string, fetch: typeof globalThis.fetch) {
  const openai = new OpenAI({ apiKey: KEY, baseURL: `${baseURL}/v1`, fetch, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: KEY, baseURL, fetch, maxRetries: 0 });
  const chat = await openai.chat.completions.create({
    model: "gpt-fake",
    messages: [{ role: "user", content: "Plan the release" }],
    temperature: 0,
  });
  const chunks: string[] = [];
  const stream = await openai.chat.completions.create({
    model: "gpt-fake",
    messages: [{ role: "user", content: "Stream the plan" }],
    stream: true,
  });
  for await (const c of stream) chunks.push(c.choices[0]?.delta.content ?? "");
  const message = await anthropic.messages.create({
    model: "claude-fake",
    max_tokens: 256,
    system: "You review diffs.",
    messages: [{ role: "user", content: "Review src/a.ts" }],
  });
  const texts: string[] = [];
  const events = await anthropic.messages.create({
    model: "claude-fake",
    max_tokens: 256,
    messages: [{ role: "user", content: "Review src/b.ts" }],
    stream: true,
  });
  for await (const e of events) {
    if (e.type === "content_block_delta" && e.delta.type === "text_delta") texts.push(e.delta.text);
  }
  return {
    chat: chat.choices[0]?.message.content,
    streamed: chunks.join(""),
    message: message.content[0],
    anthropicStreamed: texts.join(""),
  };
}

let sandbox: ReturnType<typeof importSandbox>;
afterEach(async () => sandbox.cleanup());

describe("import from nock.back fixtures", () => {
  it("imports OpenAI and Anthropic calls (plain and streamed) and replays them with 0 upstream calls", async () => {
    sandbox = importSandbox("nock");
    const provider = await startFakeProvider();
    // nock activates its interceptors when imported: load it here, not at the top.
    const nock = (await import("nock")).default;
    nock.back.fixtures = sandbox.dir;
    nock.back.setMode("record");
    const { nockDone } = await nock.back("openai-anthropic.json");
    let live: Awaited<ReturnType<typeof calls>>;
    try {
      const viaNock: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);
      live = await calls(provider.url, viaNock);
      // nock records a fetch answer from a listener that reads a clone of the
      // body after the caller has it: wait until all four are in.
      for (let i = 0; i < 1000 && nock.recorder.play().length < 4; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      nockDone();
      nock.restore();
      nock.cleanAll();
      nock.enableNetConnect();
      await provider.close();
    }
    expect(provider.calls).toBe(4);
    const fixture = join(sandbox.dir, "openai-anthropic.json");
    expect(JSON.parse(readFileSync(fixture, "utf8"))).toHaveLength(4);

    const report = await sandbox.importInto([fixture]);
    expect(report.counts).toEqual({ imported: 4, exists: 0, skipped: 0, failed: 0 });
    expect(sandbox.text()).not.toContain(KEY);

    const { fetch, upstreamCalls, recorder } = sandbox.replayFetch();
    expect(await calls(provider.url, fetch)).toEqual(live);
    expect(upstreamCalls()).toBe(0);
    expect(recorder.stats).toMatchObject({ hits: 4, misses: 0 });
  });

  it("imports a gzip-encoded answer nock kept as hex chunks, decoded exactly", async () => {
    sandbox = importSandbox("nock-gzip");
    const answer = {
      id: "chatcmpl-gz",
      object: "chat.completion",
      model: "gpt-fake",
      choices: [
        { index: 0, message: { role: "assistant", content: "zipped" }, finish_reason: "stop" },
      ],
    };
    // A provider that compresses, as the real ones do.
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(gzipSync(JSON.stringify(answer)));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const nock = (await import("nock")).default;
    nock.back.fixtures = sandbox.dir;
    nock.back.setMode("record");
    const { nockDone } = await nock.back("gzip.json");
    let live: unknown;
    try {
      const openai = new OpenAI({
        apiKey: KEY,
        baseURL: `${base}/v1`,
        fetch: (input, init) => globalThis.fetch(input, init),
        maxRetries: 0,
      });
      live = await openai.chat.completions.create({
        model: "gpt-fake",
        messages: [{ role: "user", content: "zip it" }],
      });
      for (let i = 0; i < 1000 && nock.recorder.play().length < 1; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      nockDone();
      nock.restore();
      nock.cleanAll();
      nock.enableNetConnect();
      await new Promise((r) => server.close(r));
    }
    const fixture = join(sandbox.dir, "gzip.json");
    const recorded = JSON.parse(readFileSync(fixture, "utf8"));
    expect(Array.isArray(recorded[0].response)).toBe(true); // nock's hex chunks of the gzip bytes

    const report = await sandbox.importInto([fixture]);
    expect(report.counts).toEqual({ imported: 1, exists: 0, skipped: 0, failed: 0 });
    const { fetch, upstreamCalls } = sandbox.replayFetch();
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, fetch, maxRetries: 0 });
    const again = await openai.chat.completions.create({
      model: "gpt-fake",
      messages: [{ role: "user", content: "zip it" }],
    });
    expect(again).toEqual(live);
    expect(upstreamCalls()).toBe(0);
  });
});
