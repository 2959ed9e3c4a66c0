/**
 * Usage read from real response shapes: recorded through the fetch adapter
 * and the AI SDK middleware from the loopback fake provider (whose usage
 * blocks follow the providers' API references), plus the documented
 * examples with cache and reasoning counts. Unknown shapes record nothing.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText, wrapLanguageModel } from "ai";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFetch, invocacheMiddleware } from "../../src/adapters/index.js";
import { createRecorder, type Recorder } from "../../src/index.js";
import type { Entry } from "../../src/store/envelope.js";
import { extractUsage } from "../../src/usage/extract.js";
import { FAKE_INPUT_TOKENS, type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

let provider: FakeProvider;
let recorder: Recorder;

beforeEach(async () => {
  provider = await startFakeProvider();
  recorder = createRecorder({ store: "memory://", mode: "auto", env: {}, telemetry: false });
});
afterEach(async () => {
  await recorder.close();
  await provider.close();
});

async function entries(): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const [key, value] of recorder.store.list("")) {
    if (key.includes(":e:")) out.push(value as unknown as Entry);
  }
  return out;
}

async function drain(res: Response): Promise<string> {
  return await res.text();
}

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer sk-x" },
  body: JSON.stringify(body),
});

const words = (text: string) => text.split(" ").length;

describe("usage recorded with the entry, from the fake provider through createFetch", () => {
  const cases = [
    {
      name: "OpenAI chat completions",
      path: "/v1/chat/completions",
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      shape: "openai.chat",
    },
    {
      name: "OpenAI chat completions, streamed with include_usage",
      path: "/v1/chat/completions",
      body: {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: true },
      },
      shape: "openai.chat",
    },
    {
      name: "OpenAI Responses",
      path: "/v1/responses",
      body: { model: "gpt-4o-mini", input: "hi" },
      shape: "openai.responses",
    },
    {
      name: "OpenAI Responses, streamed",
      path: "/v1/responses",
      body: { model: "gpt-4o-mini", input: "hi", stream: true },
      shape: "openai.responses",
    },
    {
      name: "Anthropic messages",
      path: "/v1/messages",
      body: {
        model: "claude-sonnet-4-5",
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
      },
      shape: "anthropic.messages",
    },
    {
      name: "Anthropic messages, streamed (message_start + message_delta)",
      path: "/v1/messages",
      body: {
        model: "claude-sonnet-4-5",
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: "hi" }],
      },
      shape: "anthropic.messages",
    },
    {
      name: "Gemini generateContent",
      path: "/v1beta/models/gemini-2.5-flash:generateContent",
      body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
      shape: "gemini.generateContent",
    },
    {
      name: "Gemini streamGenerateContent (alt=sse)",
      path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
      body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
      shape: "gemini.generateContent",
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const f = createFetch({ recorder });
      const res = await f(`${provider.url}${c.path}`, post(c.body));
      expect(res.status).toBe(200);
      await drain(res);
      const [entry] = await entries();
      expect(entry).toBeDefined();
      const model = "model" in c.body ? (c.body.model as string) : "gemini-2.5-flash";
      // The fake answers "reply #1 from <model> to: hi": one output token per word.
      const out = words(`reply #1 from ${model} to: hi`);
      expect(entry!.meta.usage).toStrictEqual({
        shape: c.shape,
        inputTokens: FAKE_INPUT_TOKENS,
        outputTokens: out,
        model,
      });
      // A replay reports the same usage as saved.
      const hit = createFetch({ recorder });
      await drain(await hit(`${provider.url}${c.path}`, post(c.body)));
      expect(recorder.stats.hits).toBe(1);
      expect(recorder.stats.saved.inputTokens).toBe(FAKE_INPUT_TOKENS);
      expect(recorder.stats.saved.outputTokens).toBe(out);
      expect(recorder.stats.spent.outputTokens).toBe(out);
    });
  }

  it("a chat stream without include_usage records no usage (nothing guessed)", async () => {
    const f = createFetch({ recorder });
    const body = {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    };
    await drain(await f(`${provider.url}/v1/chat/completions`, post(body)));
    const [entry] = await entries();
    expect(entry).toBeDefined();
    expect(entry!.meta.usage).toBeUndefined();
    expect(recorder.stats.spent.noUsage).toBe(1);
    expect(recorder.stats.spent.inputTokens).toBe(0);
  });
});

describe("usage through the AI SDK middleware", () => {
  function model() {
    const fake = createOpenAICompatible({
      name: "fake",
      baseURL: `${provider.url}/v1`,
      apiKey: "sk-x",
      includeUsage: true,
    });
    return wrapLanguageModel({
      model: fake.chatModel("gpt-4o-mini"),
      middleware: invocacheMiddleware({ recorder }),
    });
  }

  it("generateText records the v3 usage", async () => {
    await generateText({ model: model(), prompt: "hi" });
    const [entry] = await entries();
    expect(entry!.meta.usage).toMatchObject({
      shape: "ai-sdk",
      inputTokens: FAKE_INPUT_TOKENS,
      outputTokens: words("reply #1 from gpt-4o-mini to: hi"),
    });
  });

  it("streamText records the usage of the finish part", async () => {
    const r = streamText({ model: model(), prompt: "hi" });
    await r.consumeStream();
    // The recording is written once the stream ended.
    await vi.waitFor(async () => expect(await entries()).toHaveLength(1));
    const [entry] = await entries();
    expect(entry!.meta.usage).toMatchObject({
      shape: "ai-sdk",
      inputTokens: FAKE_INPUT_TOKENS,
      outputTokens: words("reply #1 from gpt-4o-mini to: hi"),
    });
  });
});

describe("extractUsage on the documented examples", () => {
  it("OpenAI chat: cached prompt tokens and reasoning tokens", () => {
    expect(
      extractUsage({
        id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        object: "chat.completion",
        created: 1741570283,
        model: "o3-mini-2025-01-31",
        choices: [],
        usage: {
          prompt_tokens: 1117,
          completion_tokens: 46,
          total_tokens: 1163,
          prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
          completion_tokens_details: {
            reasoning_tokens: 64,
            audio_tokens: 0,
            accepted_prediction_tokens: 0,
            rejected_prediction_tokens: 0,
          },
        },
      }),
    ).toStrictEqual({
      shape: "openai.chat",
      inputTokens: 1117,
      outputTokens: 46,
      cacheReadTokens: 1024,
      reasoningTokens: 64,
      model: "o3-mini-2025-01-31",
    });
  });

  it("Anthropic: cache reads and writes are added to input_tokens", () => {
    expect(
      extractUsage({
        id: "msg_01",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: [],
        usage: {
          input_tokens: 21,
          cache_creation_input_tokens: 188086,
          cache_read_input_tokens: 0,
          output_tokens: 393,
        },
      }),
    ).toStrictEqual({
      shape: "anthropic.messages",
      inputTokens: 21 + 188086,
      outputTokens: 393,
      cacheWriteTokens: 188086,
      model: "claude-sonnet-4-5-20250929",
    });
  });

  it("Gemini: cached content and thoughts (billed as output)", () => {
    expect(
      extractUsage({
        candidates: [{ content: { parts: [{ text: "x" }], role: "model" }, finishReason: "STOP" }],
        usageMetadata: {
          promptTokenCount: 5000,
          candidatesTokenCount: 120,
          thoughtsTokenCount: 300,
          cachedContentTokenCount: 4096,
          totalTokenCount: 5420,
        },
        modelVersion: "gemini-2.5-pro",
      }),
    ).toStrictEqual({
      shape: "gemini.generateContent",
      inputTokens: 5000,
      outputTokens: 420,
      cacheReadTokens: 4096,
      reasoningTokens: 300,
      model: "gemini-2.5-pro",
    });
  });

  it("unknown shapes give nothing", () => {
    for (const v of [
      null,
      "text",
      42,
      [],
      { answer: "42" },
      { usage: { prompt_tokens: 3, completion_tokens: 1 } }, // no object: "chat.completion"
      { object: "chat.completion", usage: { prompt_tokens: -1, completion_tokens: 1 } },
      { object: "chat.completion", usage: { prompt_tokens: 1.5, completion_tokens: 1 } },
      { type: "message", usage: { input_tokens: "10", output_tokens: 1 } },
      { kind: "stream", head: {}, events: [{ t: 0, data: { text: "hi" } }] },
    ]) {
      expect(extractUsage(v)).toBeUndefined();
    }
  });
});

describe("extractUsage on Anthropic's message_delta with null counts", () => {
  // The Messages API's message_delta carries the cumulative output count and,
  // in current versions, the input and cache counts as null ("not reported
  // here"): a null must not erase the count message_start gave.
  it("keeps message_start's input and cache counts when the last delta says null", () => {
    const sse = [
      {
        json: {
          type: "message_start",
          message: {
            model: "claude-x",
            usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 4 },
          },
        },
      },
      {
        json: {
          type: "message_delta",
          usage: {
            input_tokens: null,
            output_tokens: 15,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
            server_tool_use: null,
          },
        },
      },
    ];
    expect(extractUsage({ status: 200, headers: {}, sse })).toStrictEqual({
      shape: "anthropic.messages",
      inputTokens: 29,
      outputTokens: 15,
      cacheReadTokens: 4,
      model: "claude-x",
    });
  });
});

describe("extractUsage on recorded SSE text: the usage-free shortcut", () => {
  // Payloads of every streamed shape, with and without usage, some with the
  // key spelled through a \u escape (valid JSON: the shortcut must still parse).
  const PAYLOADS = [
    '{"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"delta":{"content":"hi"}}]}',
    '{"object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
    '{"object":"chat.completion.chunk","model":"gpt-4o","choices":[],"\\u0075sage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}',
    '{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":7,"output_tokens":1}}}',
    '{"type":"message_start","message":{"model":"claude-x"}}',
    '{"type":"message_delta","usage":{"output_tokens":9}}',
    '{"type":"message_delta","\\u0075sage":{"output_tokens":6}}',
    '{"type":"response.completed","response":{"object":"response","model":"gpt-4o","usage":{"input_tokens":5,"output_tokens":2}}}',
    '{"candidates":[{"content":{}}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":3}}',
    '{"candidates":[{"content":{}}],"modelVersion":"gemini-x"}',
    ' \n {"object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":1,"total_tokens":9}}',
    "[DONE]",
    "[1, 2]",
    "not json",
    "\u00a0{}",
  ];

  it("finds what parsing every payload finds, for any stream of them", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PAYLOADS), { maxLength: 8 }), (datas) => {
        const asText = { status: 200, headers: {}, sse: datas.map((data) => ({ data })) };
        // The oracle: the same payloads handed over parsed (`json`), which no shortcut skips.
        const parsed = datas.flatMap((data) => {
          try {
            return [{ json: JSON.parse(data) as unknown }];
          } catch {
            return [];
          }
        });
        const asJson = { status: 200, headers: {}, sse: parsed };
        expect(extractUsage(asText)).toStrictEqual(extractUsage(asJson));
      }),
      { numRuns: 2000 },
    );
  });

  it("a key spelled with a \\u escape is found; a stream that reports none gives none", () => {
    const sse = (...datas: string[]) => ({
      status: 200,
      headers: {},
      sse: datas.map((data) => ({ data })),
    });
    expect(extractUsage(sse(PAYLOADS[0]!, PAYLOADS[2]!, "[DONE]"))).toStrictEqual({
      shape: "openai.chat",
      inputTokens: 4,
      outputTokens: 1,
      model: "gpt-4o",
    });
    expect(extractUsage(sse(PAYLOADS[0]!, PAYLOADS[0]!, "[DONE]"))).toBeUndefined();
  });
});
