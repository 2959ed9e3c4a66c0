/**
 * The real `openai` SDK (v6) through createFetch, against the fake provider
 * over loopback HTTP: record, stop the provider, replay.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createFetch, withInvocation } from "../../src/adapters/index.js";
import type { Recorder } from "../../src/index.js";
import { sdkSuite } from "../helpers/sdk-suite.js";
import { collect, storedResponses } from "./helpers.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-live-");

function client(recorder: Recorder, maxRetries = 0): OpenAI {
  return new OpenAI({
    apiKey: KEY,
    baseURL: `${provider.url}/v1`,
    fetch: createFetch({ recorder }),
    maxRetries,
  });
}

const messages = [
  { role: "system" as const, content: "You are terse." },
  { role: "user" as const, content: "Write the build plan" },
];
const tools = [
  {
    type: "function" as const,
    function: { name: "read_file", parameters: { type: "object", properties: {} } },
  },
];

/** Every call kind the SDK makes, with what the caller sees. */
async function everything(openai: OpenAI) {
  return withInvocation({ role: "builder", task: "plan the build" }, async () => {
    const chat = await openai.chat.completions.create({
      model: "gpt-fake",
      messages,
      temperature: 0,
      tools,
    });
    const chatStream = await collect(
      await openai.chat.completions.create({
        model: "gpt-fake",
        messages,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const response = await openai.responses.create({ model: "gpt-fake", input: "Summarize" });
    const responseStream = await collect(
      await openai.responses.create({ model: "gpt-fake", input: "Summarize", stream: true }),
    );
    return {
      chat,
      requestId: chat._request_id,
      chatStream,
      response,
      outputText: response.output_text,
      responseStream,
    };
  });
}

describe("openai SDK through createFetch", () => {
  it("records chat and Responses calls (plain and streamed), then replays them identically with zero upstream calls", async () => {
    const auto = sandbox.recorder("auto");
    const live = await everything(client(auto));
    expect(provider.calls).toBe(4);
    expect(live.chat.choices[0]?.message.content).toBe(
      "reply #1 from gpt-fake to: Write the build plan",
    );
    expect(live.chatStream.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(
      "reply #2 from gpt-fake to: Write the build plan",
    );
    expect(live.chatStream.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    expect(live.outputText).toBe("reply #3 from gpt-fake to: Summarize");
    expect(live.responseStream.at(-1)?.type).toBe("response.completed");
    expect(auto.stats).toMatchObject({ misses: 4, recorded: 4, hits: 0 });
    await auto.close();
    await provider.close(); // nothing answers any more: a call upstream would fail

    const replay = sandbox.recorder("replay");
    const again = await everything(client(replay));
    expect(again).toEqual(live);
    expect(again.requestId).toBe("req_fake_1"); // the SDK read x-request-id from the replayed headers
    expect(replay.stats).toMatchObject({ hits: 4, misses: 0 });
    expect(provider.calls).toBe(4);
  });

  it("replays the recorded status, kept headers and JSON content type, never cookies or account ids", async () => {
    const openai = client(sandbox.recorder("auto"));
    const first = await openai.chat.completions
      .create({ model: "gpt-fake", messages })
      .withResponse();
    expect(first.response.headers.get("set-cookie")).toBeNull();
    const again = await openai.chat.completions
      .create({ model: "gpt-fake", messages })
      .withResponse();
    expect(provider.calls).toBe(1);
    expect(again.response.status).toBe(200);
    expect(again.response.headers.get("content-type")).toBe("application/json");
    expect(again.response.headers.get("x-request-id")).toBe("req_fake_1");
    expect(again.response.headers.get("x-ratelimit-remaining-requests")).toBe("999");
    expect(again.response.headers.get("openai-organization")).toBeNull();
    expect(again.data).toEqual(first.data);
  });

  it("a changed temperature or tool list is a miss that names the field", async () => {
    const recorder = sandbox.recorder("auto");
    await client(recorder).chat.completions.create({
      model: "gpt-fake",
      messages,
      temperature: 0,
      tools,
    });
    await recorder.close();
    const openai = client(sandbox.recorder("replay"));

    const hotter = await openai.chat.completions
      .create({ model: "gpt-fake", messages, temperature: 0.7, tools })
      .catch((e: unknown) => e);
    // A miss is answered as a 404 carrying the miss report: the SDK's own error shows it.
    expect(hotter).toBeInstanceOf(OpenAI.NotFoundError);
    expect((hotter as Error).message).toContain("params.temperature: 0 → 0.7");

    const otherTools = [{ ...tools[0]!, function: { ...tools[0]!.function, name: "edit_file" } }];
    const other = await openai.chat.completions
      .create({ model: "gpt-fake", messages, temperature: 0, tools: otherTools })
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(OpenAI.NotFoundError);
    expect((other as Error).message).toContain(
      'params.tools[0].function.name: "read_file" → "edit_file"',
    );
    // A tool added to the list is a miss too (the report's wording is the recorder's business).
    const moreTools = [
      ...tools,
      { type: "function" as const, function: { name: "w", parameters: {} } },
    ];
    await expect(
      openai.chat.completions.create({
        model: "gpt-fake",
        messages,
        temperature: 0,
        tools: moreTools,
      }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(provider.calls).toBe(1);
  });

  it("the API key reaches the provider live and appears nowhere in the SQLite file", async () => {
    const openai = client(sandbox.recorder("auto"));
    await openai.chat.completions.create({ model: "gpt-fake", messages });
    await collect(
      await openai.chat.completions.create({ model: "gpt-fake", messages, stream: true }),
    );
    expect(provider.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

    const bytes = await sandbox.bytes();
    expect(bytes.includes("req_fake_1")).toBe(true); // the grep looks at real data
    expect(bytes.includes(KEY)).toBe(false);
    expect(bytes.includes("cookie-secret")).toBe(false);
    expect(bytes.includes("org-fake-secret")).toBe(false);
    expect(bytes.includes("x-stainless")).toBe(false);
  });

  it("errors, 429s and truncated answers reach the caller and are never stored", async () => {
    const recorder = sandbox.recorder("auto");
    const openai = client(recorder);
    const ask = () => openai.chat.completions.create({ model: "gpt-fake", messages });

    provider.fail("error");
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    provider.fail("rate-limit");
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    provider.fail("truncate");
    expect((await ask()).choices[0]?.finish_reason).toBe("length");

    provider.fail("truncate");
    const cut = await collect(
      await openai.chat.completions.create({ model: "gpt-fake", messages, stream: true }),
    );
    expect(cut.at(-1)?.choices[0]?.finish_reason).toBe("length");
    provider.fail("truncate");
    expect((await openai.responses.create({ model: "gpt-fake", input: "x" })).status).toBe(
      "incomplete",
    );
    provider.fail("in-band-error");
    await expect(
      collect(await openai.chat.completions.create({ model: "gpt-fake", messages, stream: true })),
    ).rejects.toThrow("overloaded");

    expect(provider.calls).toBe(6);
    expect(await storedResponses(recorder)).toEqual([]);
    expect(recorder.stats.recorded).toBe(0);
  });

  it("streams that break midway, end early or are abandoned by the reader are not stored", async () => {
    await provider.restart({ chunkDelayMs: 15 });
    const recorder = sandbox.recorder("auto");
    const openai = client(recorder);
    const stream = () =>
      openai.chat.completions.create({ model: "gpt-fake", messages, stream: true });

    provider.fail("drop");
    await expect(collect(await stream())).rejects.toThrow();
    provider.fail("cut");
    await collect(await stream()).catch(() => {}); // ends without [DONE] or a finish reason
    // The reader breaks out after the first chunk: the SDK aborts the request.
    for await (const _ of await stream()) break;
    await new Promise((r) => setTimeout(r, 400)); // longer than the whole stream would take

    expect(provider.calls).toBe(3);
    expect(await storedResponses(recorder)).toEqual([]);
  });

  it("an SDK retry after a 429 records the successful answer once", async () => {
    const recorder = sandbox.recorder("auto");
    provider.fail("rate-limit");
    const answer = await client(recorder, 2).chat.completions.create({
      model: "gpt-fake",
      messages,
    });
    expect(provider.calls).toBe(2);
    expect(answer.choices[0]?.message.content).toContain("reply #2");
    expect(await storedResponses(recorder)).toHaveLength(1);
    await recorder.close();

    const replayed = await client(sandbox.recorder("replay")).chat.completions.create({
      model: "gpt-fake",
      messages,
    });
    expect(replayed).toEqual(answer);
    expect(provider.calls).toBe(2);
  });

  it("takes role, task and attempt from withInvocation: a retry after a rejection goes upstream", async () => {
    const recorder = sandbox.recorder("auto");
    const openai = client(recorder);
    const build = (attempt: number) =>
      withInvocation({ role: "builder", attempt }, () =>
        openai.chat.completions.create({ model: "gpt-fake", messages }),
      );
    const first = await build(0);
    expect(recorder.last?.manifest).toMatchObject({ role: "builder", attempt: 0 });
    const retry = await build(1);
    expect(retry.choices[0]?.message.content).not.toBe(first.choices[0]?.message.content);
    expect(await build(0)).toEqual(first);
    expect(provider.calls).toBe(2);
  });
});
