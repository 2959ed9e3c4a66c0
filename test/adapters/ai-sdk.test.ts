/**
 * The real `ai` package (v6) with `@ai-sdk/openai-compatible` pointed at the
 * fake provider, through invocacheMiddleware: record, stop, replay.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3Middleware } from "@ai-sdk/provider";
import { generateText, jsonSchema, streamText, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { invocacheMiddleware, withInvocation } from "../../src/adapters/index.js";
import { type Recorder, ReplayMissError } from "../../src/index.js";
import { modelOf } from "../helpers/model-manifest.js";
import { sdkSuite } from "../helpers/sdk-suite.js";
import { collect, storedResponses } from "./helpers.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-compat-");

function model(recorder: Recorder, extra: LanguageModelV3Middleware[] = []) {
  const fake = createOpenAICompatible({
    name: "fake",
    baseURL: `${provider.url}/v1`,
    apiKey: KEY,
    includeUsage: true,
  });
  return wrapLanguageModel({
    model: fake.chatModel("fake-chat"),
    middleware: [...extra, invocacheMiddleware({ recorder })],
  });
}

const tools = {
  lookup: tool({
    description: "Look a word up",
    inputSchema: jsonSchema<{ word: string }>({
      type: "object",
      properties: { word: { type: "string" } },
    }),
    execute: async ({ word }) => `${word}: a word`,
  }),
};

async function everything(recorder: Recorder) {
  const m = model(recorder);
  return withInvocation({ role: "writer", task: "draft" }, async () => {
    const generated = await generateText({
      model: m,
      prompt: "Draft the release notes",
      temperature: 0.3,
      tools,
      maxRetries: 0,
    });
    const streamed = streamText({ model: m, prompt: "Stream the notes", maxRetries: 0 });
    const parts = await collect(streamed.fullStream);
    return {
      text: generated.text,
      content: generated.content,
      finishReason: generated.finishReason,
      usage: generated.usage,
      response: {
        id: generated.response.id,
        modelId: generated.response.modelId,
        timestamp: generated.response.timestamp,
        headers: generated.response.headers,
        body: generated.response.body,
      },
      parts,
      streamedText: await streamed.text,
      streamedResponse: await streamed.response,
    };
  });
}

describe("AI SDK through invocacheMiddleware", () => {
  it("records generateText and streamText, then replays them identically (parts in order, Dates restored) with zero upstream calls", async () => {
    const auto = sandbox.recorder("auto");
    const live = await everything(auto);
    expect(provider.calls).toBe(2);
    expect(live.text).toBe("reply #1 from fake-chat to: Draft the release notes");
    expect(live.streamedText).toBe("reply #2 from fake-chat to: Stream the notes");
    expect(live.response.timestamp).toBeInstanceOf(Date);
    expect(live.parts.filter((p) => p.type === "text-delta").length).toBeGreaterThan(3);
    await auto.close();
    await provider.close();

    const replay = sandbox.recorder("replay");
    const again = await everything(replay);
    expect(again).toEqual(live);
    expect(again.response.timestamp).toBeInstanceOf(Date);
    expect(again.parts.map((p) => p.type)).toEqual(live.parts.map((p) => p.type));
    expect(replay.stats).toMatchObject({ hits: 2, misses: 0 });
  });

  it("keys on model, prompt and call settings, never on headers or the abort signal", async () => {
    const recorder = sandbox.recorder("auto");
    const m = model(recorder);
    await generateText({ model: m, prompt: "Hello", temperature: 0, maxRetries: 0 });
    const manifest = recorder.last?.manifest;
    expect(modelOf(manifest).model).toBe("fake.chat:fake-chat");
    expect(modelOf(manifest).params).toMatchObject({ temperature: 0, ":call": "generate" });
    await generateText({
      model: m,
      prompt: "Hello",
      temperature: 0,
      maxRetries: 0,
      headers: { "x-trace-id": "abc" },
      abortSignal: new AbortController().signal,
    });
    expect(recorder.last?.hit).toBe(true);
    expect(provider.calls).toBe(1);
    await recorder.close();

    const replay = model(sandbox.recorder("replay"));
    const miss = await generateText({
      model: replay,
      prompt: "Hello",
      temperature: 0.9,
      maxRetries: 0,
    }).catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect((miss as ReplayMissError).message).toContain("params.temperature: 0 → 0.9");
  });

  it("never stores an error, a truncated answer, an in-band stream error or an aborted stream", async () => {
    await provider.restart({ chunkDelayMs: 10 });
    const recorder = sandbox.recorder("auto");
    const m = model(recorder);

    provider.fail("error");
    await expect(generateText({ model: m, prompt: "a", maxRetries: 0 })).rejects.toThrow();
    provider.fail("truncate");
    expect((await generateText({ model: m, prompt: "a", maxRetries: 0 })).finishReason).toBe(
      "length",
    );
    provider.fail("in-band-error");
    const broken = streamText({ model: m, prompt: "b", maxRetries: 0, onError: () => {} });
    const parts = await collect(broken.fullStream);
    expect(parts.some((p) => p.type === "error")).toBe(true);

    const controller = new AbortController();
    const aborted = streamText({
      model: m,
      prompt: "c",
      maxRetries: 0,
      abortSignal: controller.signal,
      onError: () => {},
    });
    for await (const part of aborted.fullStream) {
      if (part.type === "text-delta") controller.abort();
    }
    await new Promise((r) => setTimeout(r, 300)); // longer than the stream would take

    expect(provider.calls).toBe(4);
    expect(await storedResponses(recorder)).toEqual([]);
  });

  it("never stores the request body or headers outside the allowlist; the API key appears nowhere", async () => {
    const recorder = sandbox.recorder("auto");
    const m = model(recorder);
    await generateText({ model: m, prompt: "Secretless", maxRetries: 0 });
    await collect(streamText({ model: m, prompt: "Secretless", maxRetries: 0 }).fullStream);
    expect(provider.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    const bytes = await sandbox.bytes();
    expect(bytes.includes("req_fake_1")).toBe(true);
    expect(bytes.includes(KEY)).toBe(false);
    expect(bytes.includes("cookie-secret")).toBe(false);
  });
});
