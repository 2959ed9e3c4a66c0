/**
 * LangChain.js through invocache, with the real packages (@langchain/core,
 * @langchain/openai) against the fake provider on loopback: the cache route
 * (`InvocacheCache`), the fetch route (`createFetch` as ChatOpenAI's and
 * ChatAnthropic's client fetch: streaming and tools), and the invocation
 * context through runnables.
 */

import { ChatAnthropic } from "@langchain/anthropic";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { ChatOpenAI } from "@langchain/openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createFetch,
  currentInvocation,
  type Recorder,
  ReplayMissError,
  withInvocation,
} from "../../src/index.js";
import {
  describeLlmString,
  IntegrationError,
  InvocacheCache,
} from "../../src/integrations/langchain.js";
import { sqliteSandbox } from "../adapters/helpers.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

const API_KEY = "sk-langchain-test-key-0123456789abcdef";
let provider: FakeProvider;
let box: Awaited<ReturnType<typeof sqliteSandbox>>;

beforeEach(async () => {
  provider = await startFakeProvider();
  box = await sqliteSandbox();
});
afterEach(async () => {
  await provider.close();
  await box.cleanup();
});

function cachedModel(recorder: Recorder, extra: Record<string, unknown> = {}): ChatOpenAI {
  return new ChatOpenAI({
    model: "gpt-4o-mini",
    apiKey: API_KEY,
    temperature: 0,
    maxRetries: 0,
    configuration: { baseURL: `${provider.url}/v1` },
    cache: new InvocacheCache({ recorder }),
    ...extra,
  });
}

const weather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

describe("InvocacheCache (the cache route)", () => {
  it("records the model's own time (lookup miss to update), not update's ~0 ms", async () => {
    const SLOW_MS = 60;
    // The real upstream, made at least SLOW_MS slow: the recording must say so.
    const slowFetch: typeof fetch = async (url, init) => {
      await new Promise((r) => setTimeout(r, SLOW_MS));
      return fetch(url, init);
    };
    const recorder = box.recorder("auto");
    const model = cachedModel(recorder, {
      configuration: { baseURL: `${provider.url}/v1`, fetch: slowFetch },
    });
    await withInvocation({ role: "planner" }, () => model.invoke("Plan the release"));
    expect(provider.calls).toBe(1);
    const durations: number[] = [];
    for await (const [, v] of recorder.store.list("default:e:"))
      durations.push((v as { meta: { durationMs: number } }).meta.durationMs);
    expect(durations).toHaveLength(1);
    expect(durations[0]).toBeGreaterThanOrEqual(SLOW_MS);
  });

  it("records on the first run and replays with the provider stopped, zero upstream calls", async () => {
    const pipeline = async (recorder: Recorder) => {
      const model = cachedModel(recorder);
      const plain = await withInvocation({ role: "planner", task: "release" }, () =>
        model.invoke("Plan the release"),
      );
      const withTools = await withInvocation({ role: "builder" }, () =>
        model.bindTools([weather]).invoke([
          ["system", "Be brief"],
          ["human", "Weather in Oslo?"],
        ]),
      );
      return [plain.content, withTools.content];
    };
    const first = await pipeline(box.recorder("auto"));
    expect(provider.calls).toBe(2);
    await provider.close();
    const replayer = box.recorder("replay");
    const second = await pipeline(replayer);
    expect(second).toStrictEqual(first);
    expect(first[0]).toMatch(/^reply #1 /);
    expect(provider.calls).toBe(2);
    expect(replayer.stats.hits).toBe(2);
    expect(replayer.last?.manifest.role).toBe("builder");
  });

  it("keys on bound tools: another tool schema is a miss that names params.tools", async () => {
    await withInvocation({ role: "builder" }, () =>
      cachedModel(box.recorder("auto")).bindTools([weather]).invoke("Weather in Oslo?"),
    );
    const other = tool(async () => "x", {
      name: "weather",
      description: "The weather in a city",
      schema: z.object({ city: z.string(), unit: z.enum(["C", "F"]) }),
    });
    const miss = await withInvocation({ role: "builder" }, () =>
      cachedModel(box.recorder("replay")).bindTools([other]).invoke("Weather in Oslo?"),
    ).catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect((miss as ReplayMissError).message).toContain("params.tools");
  });

  it("a changed setting is a miss that names the field, like the other adapters", async () => {
    await cachedModel(box.recorder("auto")).invoke("Plan it");
    const miss = await cachedModel(box.recorder("replay"), { temperature: 0.7 })
      .invoke("Plan it")
      .catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect((miss as ReplayMissError).message).toContain("params.temperature: 0 → 0.7");
  });

  it("keeps the API key and the base URL out of the identity and the store", async () => {
    const recorder = box.recorder("auto");
    await cachedModel(recorder).invoke("Plan it");
    const manifest = JSON.stringify(recorder.last?.manifest);
    expect(manifest).toContain('"gpt-4o-mini"');
    expect(manifest).not.toContain(API_KEY);
    expect(manifest).not.toContain("127.0.0.1");
    const bytes = await box.bytes();
    expect(bytes.includes(Buffer.from("reply #1"))).toBe(true); // the control: the entry is there
    expect(bytes.includes(Buffer.from(API_KEY))).toBe(false);
  });

  it("gives the retry after a rejection a new identity (attempt from withInvocation)", async () => {
    const recorder = box.recorder("auto");
    const model = cachedModel(recorder);
    const drafts: string[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const draft = await withInvocation({ role: "builder", attempt }, () =>
        model.invoke("Write the changelog"),
      );
      drafts.push(String(draft.content));
    }
    expect(drafts[0]).not.toBe(drafts[1]);
    expect(provider.calls).toBe(2);
  });

  it("does not store a generation cut by the token limit", async () => {
    const recorder = box.recorder("auto");
    provider.fail("truncate");
    await cachedModel(recorder).invoke("Plan it");
    await cachedModel(recorder).invoke("Plan it");
    expect(provider.calls).toBe(2);
    expect(recorder.stats.recorded).toBe(1);
  });

  it("refuses a key LangChain wrote a tool instance into (its schema would not count)", async () => {
    // LangChain's own cache keys this on {"lc":1,"type":"not_implemented"}: any schema collides.
    const model = new FakeListChatModel({
      responses: ["sunny"],
      cache: new InvocacheCache({ recorder: box.recorder("auto") }),
    });
    const error = await model
      .withConfig({ tools: [weather] } as never)
      .invoke("Weather in Oslo?")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntegrationError);
    expect((error as IntegrationError).code).toBe("ERR_INTEGRATION_KEY");
    expect((error as Error).message).toContain(
      "params.tools[0] is a langchain.tools.DynamicStructuredTool",
    );
  });

  it("follows the recorder's mode: passthrough stores nothing, record always calls upstream", async () => {
    const passthrough = box.recorder("passthrough");
    await cachedModel(passthrough).invoke("Plan it");
    expect(passthrough.stats.recorded).toBe(0);
    const recorder = box.recorder("record");
    const a = await cachedModel(recorder).invoke("Plan it");
    const b = await cachedModel(recorder).invoke("Plan it");
    expect(provider.calls).toBe(3);
    expect(a.content).not.toBe(b.content);
    expect(recorder.stats.recorded).toBe(2);
    const replayed = await cachedModel(box.recorder("replay")).invoke("Plan it");
    expect(replayed.content).toBe(b.content); // the latest recording wins
  });

  it("refuses a missing recorder with the fix", () => {
    expect(() => new InvocacheCache({} as never)).toThrow(/options.recorder must be a recorder/);
  });
});

describe("InvocacheCache: identical concurrent calls in one run", () => {
  it("records three identical invokes under Promise.all as occurrences 0, 1, 2 and replays them in the same run", async () => {
    const runId = "lc-concurrent";
    const pipeline = (recorder: Recorder) =>
      recorder.run(
        () => {
          const model = cachedModel(recorder);
          return Promise.all([1, 2, 3].map(() => model.invoke("Same question")));
        },
        { runId },
      );
    const recorder = box.recorder("auto");
    const recorded: number[] = [];
    recorder.on("record", (e) => recorded.push(e.occurrence));
    const first = (await pipeline(recorder)).map((m) => String(m.content));
    expect(provider.calls).toBe(3);
    expect(new Set(first).size).toBe(3);
    expect(recorded.sort()).toStrictEqual([0, 1, 2]);
    await provider.close();
    const replayer = box.recorder("replay");
    const hits: number[] = [];
    replayer.on("hit", (e) => hits.push(e.occurrence));
    const second = (await pipeline(replayer)).map((m) => String(m.content));
    expect(hits.sort()).toStrictEqual([0, 1, 2]);
    expect(provider.calls).toBe(3);
    // Each replayed answer is one of the recorded ones, and all three come back.
    expect([...second].sort()).toStrictEqual([...first].sort());
  });
});

describe("describeLlmString", () => {
  it("parses LangChain's key:JSON pairs, JSON with commas and colons inside", () => {
    expect(
      describeLlmString(
        '_model:"base_chat_model",_type:"openai",apiKey:"sk-x",baseURL:"http://h:1/v1",model:"gpt-5",model_name:"gpt-5",stop:["a,b","c:d"],temperature:0,tools:[{"type":"function","function":{"name":"w"}}]',
      ),
    ).toStrictEqual({
      model: "gpt-5",
      params: {
        _model: "base_chat_model",
        _type: "openai",
        stop: ["a,b", "c:d"],
        temperature: 0,
        tools: [{ type: "function", function: { name: "w" } }],
      },
    });
  });

  it("drops credentials by exact name, never real params that merely contain a word like secret", () => {
    const credentials = [
      "apiKey",
      "api_key",
      "openAIApiKey",
      "azureOpenAIApiKey",
      "anthropicApiKey",
      "access_token",
      "accessToken",
      "client_secret",
      "secret",
      "password",
    ];
    const llm = [
      ...credentials.map((k) => `${k}:"sk-cred-${k}"`),
      'model:"gpt-5"',
      'password_policy:"strict"',
      'secret_sauce:"umami"',
    ].join(",");
    const { params } = describeLlmString(llm);
    expect(params).toStrictEqual({ password_policy: "strict", secret_sauce: "umami" });
  });

  it("keys on secret_sauce and password_policy (a different value is a miss), never stores the API key", async () => {
    const withKwargs = (recorder: Recorder, sauce: string) =>
      cachedModel(recorder, { modelKwargs: { secret_sauce: sauce, password_policy: "strict" } });
    await withKwargs(box.recorder("auto"), "umami").invoke("Season it");
    const again = await withKwargs(box.recorder("replay"), "umami").invoke("Season it");
    expect(String(again.content)).toMatch(/^reply #1 /);
    const miss = await withKwargs(box.recorder("replay"), "salt")
      .invoke("Season it")
      .catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect((miss as ReplayMissError).message).toContain("params.secret_sauce");
    const bytes = await box.bytes();
    expect(bytes.includes(Buffer.from("password_policy"))).toBe(true); // the control
    expect(bytes.includes(Buffer.from(API_KEY))).toBe(false);
  });

  it("keeps a string that is not LangChain's format whole", () => {
    expect(describeLlmString("my-custom-llm{weird}")).toStrictEqual({
      model: null,
      params: { ":llm_string": "my-custom-llm{weird}" },
    });
  });
});

describe("the fetch route: createFetch as ChatOpenAI's client fetch", () => {
  it("records and replays streaming and tool-bound calls, which LangChain's cache does not cover", async () => {
    const pipeline = async (recorder: Recorder) => {
      const model = new ChatOpenAI({
        model: "gpt-4o-mini",
        apiKey: API_KEY,
        maxRetries: 0,
        configuration: { baseURL: `${provider.url}/v1`, fetch: createFetch({ recorder }) },
      });
      let streamed = "";
      for await (const chunk of await model.stream("Stream the checklist")) {
        streamed += String(chunk.content);
      }
      const tooled = await model.bindTools([weather]).invoke("Weather in Oslo?");
      return [streamed, tooled.content];
    };
    const first = await pipeline(box.recorder("auto"));
    expect(first[0]).toMatch(/^reply #1 /);
    await provider.close();
    const replayer = box.recorder("replay");
    expect(await pipeline(replayer)).toStrictEqual(first);
    expect(provider.calls).toBe(2);
    expect(replayer.stats.hits).toBe(2);
  });
});

describe("the fetch route: createFetch as ChatAnthropic's client fetch", () => {
  const anthropic = (recorder: Recorder, extra: Record<string, unknown> = {}) =>
    new ChatAnthropic({
      model: "claude-sonnet-4-5",
      apiKey: API_KEY,
      maxRetries: 0,
      temperature: 0,
      clientOptions: { baseURL: provider.url, fetch: createFetch({ recorder }) },
      ...extra,
    });

  it("records plain, streamed and tool-bound messages, then replays them with the provider stopped", async () => {
    const pipeline = async (recorder: Recorder) => {
      const model = anthropic(recorder);
      const plain = await withInvocation({ role: "reviewer" }, () =>
        model.invoke([
          ["system", "Be brief"],
          ["human", "Review the diff"],
        ]),
      );
      let streamed = "";
      for await (const chunk of await model.stream("Stream the checklist")) {
        streamed +=
          typeof chunk.content === "string" ? chunk.content : JSON.stringify(chunk.content);
      }
      const tooled = await model.bindTools([weather]).invoke("Weather in Oslo?");
      return [plain.content, streamed, tooled.content];
    };
    const first = await pipeline(box.recorder("auto"));
    expect(first[0]).toMatch(/^reply #1 /);
    expect(first[1]).toMatch(/^reply #2 /);
    expect(provider.calls).toBe(3);
    expect(provider.requests.map((r) => r.path)).toStrictEqual([
      "/v1/messages",
      "/v1/messages",
      "/v1/messages",
    ]);
    expect(
      provider.requests.map((r) => (r.body as { stream?: boolean }).stream === true),
    ).toStrictEqual([false, true, false]); // the second call really streamed (SSE)
    await provider.close();
    const replayer = box.recorder("replay");
    expect(await pipeline(replayer)).toStrictEqual(first);
    expect(provider.calls).toBe(3);
    expect(replayer.stats.hits).toBe(3);
  });

  it("a changed setting is a miss that names the field, like the other adapters", async () => {
    await anthropic(box.recorder("auto")).invoke("Review the diff");
    const miss = await anthropic(box.recorder("replay"), { temperature: 0.5 })
      .invoke("Review the diff")
      .catch((e: unknown) => e);
    // Answered as a 404 carrying the miss report: the SDK's own error shows it, first.
    expect((miss as { status?: number }).status).toBe(404);
    expect((miss as Error).message).toContain("params.temperature: 0 → 0.5");
  });
});

describe("the fetch route: a miss through ChatOpenAI names the field", () => {
  it("another max token count is a miss naming params.max_tokens", async () => {
    const chat = (recorder: Recorder, maxTokens: number) =>
      new ChatOpenAI({
        model: "gpt-4o-mini",
        apiKey: API_KEY,
        maxRetries: 0,
        maxTokens,
        configuration: { baseURL: `${provider.url}/v1`, fetch: createFetch({ recorder }) },
      });
    await chat(box.recorder("auto"), 64).invoke("Plan it");
    const miss = await chat(box.recorder("replay"), 128)
      .invoke("Plan it")
      .catch((e: unknown) => e);
    // Answered as a 404 carrying the miss report: the SDK's own error shows it, first.
    expect((miss as { status?: number }).status).toBe(404);
    expect((miss as Error).message).toContain("params.max_tokens: 64 → 128");
  });
});

describe("the invocation context flows through LangChain runnables", () => {
  it("survives RunnableSequence, RunnableLambda and LangChain's callbacks", async () => {
    const recorder = box.recorder("auto");
    const seenInCallback: string[] = [];
    class Spy extends BaseCallbackHandler {
      name = "spy";
      override handleChatModelStart(): void {
        const ctx = currentInvocation();
        seenInCallback.push(`${ctx.role}/${ctx.attempt}`);
      }
    }
    const prompt = ChatPromptTemplate.fromMessages([["human", "Review {thing}"]]);
    const chain = RunnableSequence.from([
      prompt,
      RunnableLambda.from((value: unknown, config) =>
        // A nested step inside the chain: its fields win, the rest is inherited.
        withInvocation({ attempt: 2 }, () => cachedModel(recorder).invoke(value as never, config)),
      ),
    ]);
    await withInvocation({ role: "reviewer", task: "ship 1.2" }, () =>
      chain.invoke({ thing: "the diff" }, { callbacks: [new Spy()] }),
    );
    expect(recorder.last?.manifest).toMatchObject({
      role: "reviewer",
      task: "ship 1.2",
      attempt: 2,
    });
    expect(seenInCallback).toStrictEqual(["reviewer/2"]);
  });
});
