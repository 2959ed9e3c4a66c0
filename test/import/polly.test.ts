/**
 * Polly.js (core, fetch adapter, fs persister) records real OpenAI and
 * Anthropic SDK calls against the fake provider on loopback; its HAR file is
 * imported, the provider closed, and the same SDK calls replay through
 * createFetch with no upstream call. The API key (in the HAR's request
 * headers and, here, in a message body) never reaches the cassette.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { importSandbox } from "./helpers.js";

const KEY = `sk-live-${"7f3a9c".repeat(6)}-do-not-store`;

async function pollyClass() {
  const { Polly } = await import("@pollyjs/core");
  type Plugin = Parameters<typeof Polly.register>[0];
  // CommonJS packages typed with `export default`: the default import is the class.
  Polly.register((await import("@pollyjs/adapter-fetch")).default as unknown as Plugin);
  Polly.register((await import("@pollyjs/persister-fs")).default as unknown as Plugin);
  return Polly;
}

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

describe("import from Polly.js HAR recordings", () => {
  it("imports OpenAI and Anthropic calls (plain and streamed) and replays them with 0 upstream calls", async () => {
    sandbox = importSandbox("polly");
    const provider = await startFakeProvider();
    const Polly = await pollyClass();
    const recordingsDir = join(sandbox.dir, "recordings");
    const polly = new Polly("import", {
      adapters: ["fetch"],
      persister: "fs",
      persisterOptions: { fs: { recordingsDir } },
      mode: "record",
      recordFailedRequests: true,
      logLevel: "silent",
    });
    let live: Awaited<ReturnType<typeof calls>>;
    let secretAnswer: string | null | undefined;
    try {
      // Polly patches globalThis.fetch: the SDKs call it at request time.
      const viaPolly: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);
      live = await calls(provider.url, viaPolly);
      const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, fetch: viaPolly });
      const withKey = await openai.chat.completions.create({
        model: "gpt-fake",
        messages: [{ role: "user", content: `my key is ${KEY}` }],
      });
      secretAnswer = withKey.choices[0]?.message.content;
      await viaPolly(`${provider.url}/health`); // a GET (a 404 here): not a model call
    } finally {
      await polly.stop();
      await provider.close();
    }
    expect(provider.calls).toBe(5);
    expect(secretAnswer).toContain(KEY); // the fake provider echoes the prompt

    const [folder] = readdirSync(recordingsDir);
    const har = join(recordingsDir, String(folder), "recording.har");
    const env = { OPENAI_API_KEY: KEY };
    const report = await sandbox.importInto([har], { env });
    expect(report.counts).toEqual({ imported: 5, exists: 0, skipped: 1, failed: 0 });
    expect(report.items.find((i) => i.outcome === "skipped")?.reason).toMatch(/a GET request/);
    // The key was in every request's headers and in one body and answer: never stored.
    expect(sandbox.text()).not.toContain(KEY);
    expect(sandbox.text()).toMatch(/my key is \{secret:[\w-]+\}/);

    const { fetch, upstreamCalls, recorder } = sandbox.replayFetch(env);
    expect(await calls(provider.url, fetch)).toEqual(live);
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, fetch, maxRetries: 0 });
    const again = await openai.chat.completions.create({
      model: "gpt-fake",
      messages: [{ role: "user", content: `my key is ${KEY}` }],
    });
    expect(again.choices[0]?.message.content).toMatch(/\{secret:[\w-]+\}/);
    expect(upstreamCalls()).toBe(0);
    expect(recorder.stats).toMatchObject({ hits: 5, misses: 0 });
  });
});
