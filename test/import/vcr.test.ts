/**
 * Real vcrpy cassettes (from DataDog/dd-trace-py's test suite, see
 * test/fixtures/import/vcr/dd-trace-py/README.md) imported, then replayed
 * through createFetch with the real OpenAI and Anthropic SDKs pointed at the
 * recorded host, and an upstream that fails if called.
 */

import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createProxy } from "../../src/proxy/index.js";
import { importSandbox } from "./helpers.js";

const DIR = join(import.meta.dirname, "../fixtures/import/vcr/dd-trace-py");
const fixture = (name: string) => join(DIR, name);

let sandbox: ReturnType<typeof importSandbox>;
afterEach(async () => sandbox.cleanup());

describe("import from vcrpy cassettes", () => {
  it("imports an OpenAI chat completion (httpx `content`) and a stream, and skips a GET", async () => {
    sandbox = importSandbox("vcr-openai");
    const report = await sandbox.importInto([
      fixture("openai-chat_completion.yaml"),
      fixture("openai-chat_completion_streamed.yaml"),
      fixture("openai-model_retrieve.yaml"),
    ]);
    expect(report.counts).toEqual({ imported: 2, exists: 0, skipped: 1, failed: 0 });
    expect(report.items[2]).toMatchObject({
      outcome: "skipped",
      request: "GET https://api.openai.com/v1/models/curie",
    });
    expect(report.items[2]?.reason).toMatch(/not a model call: a GET request/);

    const { fetch, upstreamCalls } = sandbox.replayFetch();
    const openai = new OpenAI({ apiKey: "sk-test", fetch, maxRetries: 0 });
    const answer = await openai.chat.completions.create({
      model: "gpt-3.5-turbo",
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "Who won the world series in 2020?" },
        { role: "assistant", content: "The Los Angeles Dodgers won the World Series in 2020." },
        { role: "user", content: "Where was it played?" },
      ],
      n: 2,
      top_p: 0.9,
      user: "ddtrace-test",
    });
    expect(answer.choices[0]?.message.content).toBe(
      "The 2020 World Series was played in Arlington, Texas at Globe Life Field.",
    );
    const stream = await openai.chat.completions.create({
      model: "gpt-3.5-turbo",
      messages: [{ role: "user", content: "Who won the world series in 2020?" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toMatch(/^The Los Angeles Dodgers won the World Series in 2020/);
    expect(upstreamCalls()).toBe(0);
  });

  it("imports an Anthropic message (gzip `!!binary` body) and a stream; skips a truncated answer and an HTTP 400", async () => {
    sandbox = importSandbox("vcr-anthropic");
    const report = await sandbox.importInto([
      fixture("anthropic_completion_tools.yaml"),
      fixture("anthropic_completion_stream.yaml"),
      fixture("anthropic_completion.yaml"),
      fixture("anthropic_completion_error.yaml"),
    ]);
    expect(report.counts).toEqual({ imported: 2, exists: 0, skipped: 2, failed: 0 });
    // max_tokens 15 cut the answer (stop_reason "max_tokens"): createFetch never stores that.
    expect(report.items[2]).toMatchObject({
      outcome: "skipped",
      reason: expect.stringMatching(/incomplete/),
    });
    expect(report.items[3]).toMatchObject({
      outcome: "skipped",
      reason: expect.stringMatching(/HTTP 400/),
    });

    const replayed = await sandbox.replayImported(report);
    expect(replayed.upstreamCalls).toBe(0);
    expect(replayed.stats).toMatchObject({ hits: 2, misses: 0 });
    expect(replayed.answers[0]?.body).toMatchObject({ stop_reason: "tool_use", type: "message" });
    expect(String(replayed.answers[1]?.body)).toMatch(/event: message_stop/);

    const { fetch, upstreamCalls } = sandbox.replayFetch();
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", fetch, maxRetries: 0 });
    const stream = await anthropic.messages.create({
      max_tokens: 15,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "text",
              text: "Can you explain what Descartes meant by 'I think, therefore I am'?",
            },
          ],
        },
      ],
      model: "claude-3-opus-20240229",
      stream: true,
    });
    let text = "";
    for await (const event of stream) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta")
        text += event.delta.text;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(upstreamCalls()).toBe(0);
  });

  it("an imported entry replays through the proxy too (same identity), with 0 upstream calls", async () => {
    sandbox = importSandbox("vcr-proxy");
    const report = await sandbox.importInto([fixture("openai-chat_completion.yaml")]);
    expect(report.counts.imported).toBe(1);
    let upstream = 0;
    const proxy = await createProxy({
      store: sandbox.cassette,
      mode: "replay",
      env: {},
      fetch: async () => {
        upstream++;
        throw new Error("upstream called during replay");
      },
    });
    try {
      const openai = new OpenAI({
        apiKey: "sk-test",
        baseURL: `${proxy.url}/openai/v1`,
        maxRetries: 0,
      });
      const answer = await openai.chat.completions.create({
        model: "gpt-3.5-turbo",
        messages: [
          { role: "system", content: "You are a helpful assistant." },
          { role: "user", content: "Who won the world series in 2020?" },
          { role: "assistant", content: "The Los Angeles Dodgers won the World Series in 2020." },
          { role: "user", content: "Where was it played?" },
        ],
        n: 2,
        top_p: 0.9,
        user: "ddtrace-test",
      });
      expect(answer.choices).toHaveLength(2);
    } finally {
      await proxy.close();
    }
    expect(upstream).toBe(0);
  });
});
