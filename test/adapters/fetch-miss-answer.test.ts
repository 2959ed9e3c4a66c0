/**
 * A replay miss through createFetch is answered as an HTTP 404 in the
 * provider's own error shape (never thrown, never a status an SDK retries),
 * so the real SDKs raise their NotFoundError with the miss report as the
 * message, after exactly one request. The same answer the proxy gives.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createFetch, withInvocation } from "../../src/adapters/index.js";
import { type Recorder, ReplayMissError } from "../../src/index.js";
import { sdkSuite } from "../helpers/sdk-suite.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-live-");

/** createFetch in front of an empty store, counting the requests the SDK makes. */
function counted(recorder: Recorder, options: { onMiss?: "response" | "throw" } = {}) {
  const inner = createFetch({ recorder, ...options });
  const seen = { requests: 0 };
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    seen.requests++;
    return inner(input, init);
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const messages = [{ role: "user" as const, content: "Write the build plan" }];

async function failure(p: Promise<unknown>): Promise<Error> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("a replay miss through createFetch is an HTTP error answer, not a connection error", () => {
  it("openai: NotFoundError whose message is the miss report, one request, no retries", async () => {
    const recorder = sandbox.recorder("replay");
    const { fetch, seen } = counted(recorder);
    // The SDK's default retries (2) stay on: a miss must not be retried.
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, fetch });
    const error = await failure(
      withInvocation({ role: "planner" }, () =>
        openai.chat.completions.create({ model: "gpt-fake", messages, temperature: 0 }),
      ),
    );
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).not.toBeInstanceOf(OpenAI.APIConnectionError);
    const apiError = error as InstanceType<typeof OpenAI.NotFoundError>;
    expect(apiError.status).toBe(404);
    expect(apiError.message).toContain("invocache: no recording for");
    expect(apiError.message).toContain("INVOCACHE_MODE=record");
    expect(apiError.code).toBe("replay_miss");
    expect(apiError.type).toBe("invocache_replay_miss");
    expect(apiError.headers?.get("x-invocache-miss")).toBe("1");
    expect(apiError.headers?.get("x-should-retry")).toBe("false");
    expect(seen.requests).toBe(1);
    expect(provider.calls).toBe(0);
    expect(apiError.message).not.toContain(KEY);
  });

  it("openai: the message names the field that differs from the nearest entry", async () => {
    const auto = sandbox.recorder("auto");
    await new OpenAI({
      apiKey: KEY,
      baseURL: `${provider.url}/v1`,
      fetch: createFetch({ recorder: auto }),
      maxRetries: 0,
    }).chat.completions.create({ model: "gpt-fake", messages, temperature: 0 });
    await auto.close();
    const { fetch, seen } = counted(sandbox.recorder("replay"));
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, fetch });
    const error = await failure(
      openai.chat.completions.create({ model: "gpt-fake", messages, temperature: 0.7 }),
    );
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.message).toContain("params.temperature: 0 → 0.7");
    expect(seen.requests).toBe(1);
    expect(provider.calls).toBe(1);
  });

  it("openai, streamed: the same NotFoundError before any chunk", async () => {
    const { fetch, seen } = counted(sandbox.recorder("replay"));
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, fetch });
    const error = await failure(
      openai.chat.completions.create({ model: "gpt-fake", messages, stream: true }),
    );
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.message).toContain("invocache: no recording for");
    expect(seen.requests).toBe(1);
  });

  it("anthropic: NotFoundError in Anthropic's error shape, one request, no retries", async () => {
    const { fetch, seen } = counted(sandbox.recorder("replay"));
    const anthropic = new Anthropic({ apiKey: KEY, baseURL: provider.url, fetch });
    const error = await failure(
      anthropic.messages.create({ model: "claude-fake", max_tokens: 64, messages }),
    );
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error).not.toBeInstanceOf(Anthropic.APIConnectionError);
    const apiError = error as InstanceType<typeof Anthropic.NotFoundError>;
    expect(apiError.status).toBe(404);
    expect(apiError.message).toContain("invocache: no recording for");
    expect(apiError.message).toContain("INVOCACHE_MODE=record");
    expect(apiError.error).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(seen.requests).toBe(1);
    expect(provider.calls).toBe(0);
  });

  it("gemini (by path): the Google error shape through plain fetch", async () => {
    const f = createFetch({ recorder: sandbox.recorder("replay") });
    const res = await f(`${provider.url}/v1beta/models/gemini-fake:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] }),
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(res.headers.get("x-invocache-miss")).toBe("1");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: { code: number; message: string; status: string } };
    expect(body.error.code).toBe(404);
    expect(body.error.status).toBe("NOT_FOUND");
    expect(body.error.message).toContain("invocache: no recording for");
    expect(JSON.stringify(body)).not.toContain(KEY);
    expect(provider.calls).toBe(0);
  });

  it('onMiss: "throw" keeps the ReplayMissError thrown from fetch', async () => {
    const { fetch, seen } = counted(sandbox.recorder("replay"), { onMiss: "throw" });
    await expect(
      fetch(`${provider.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-fake", messages }),
      }),
    ).rejects.toBeInstanceOf(ReplayMissError);
    expect(seen.requests).toBe(1);
  });

  it("a bad onMiss is a typed error naming the field", () => {
    expect(() =>
      createFetch({ recorder: sandbox.recorder("replay"), onMiss: "ignore" as "throw" }),
    ).toThrow(/onMiss/);
  });
});
