/**
 * invocache/global against the real parts: the `openai` and
 * `@anthropic-ai/sdk` clients created WITHOUT our fetch, and a plain
 * node:http request, talking to the fake provider on loopback. Record, stop
 * the provider, replay (0 upstream calls: it is gone); the identity is
 * createFetch's (a createFetch client replays what global mode recorded);
 * non-model requests pass through; restore() puts fetch and node:http back.
 */
import http from "node:http";
import https from "node:https";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createFetch, withInvocation } from "../../src/adapters/index.js";
import { InvalidOptionError } from "../../src/index.js";
import { type GlobalInterception, interceptGlobally } from "../../src/integrations/global.js";
import { collect } from "../adapters/helpers.js";
import { sdkSuite } from "../helpers/sdk-suite.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-live-");

let handle: GlobalInterception | undefined;
afterEach(async () => {
  await handle?.restore();
  handle = undefined;
});

const messages = [{ role: "user" as const, content: "Write the build plan" }];

/** What the app does: SDK clients made with no fetch option, as third-party code makes them. */
async function app(base: string) {
  const openai = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: KEY, baseURL: base, maxRetries: 0 });
  return withInvocation({ role: "planner" }, async () => {
    const chat = await openai.chat.completions.create({ model: "gpt-fake", messages });
    const stream = await collect(
      await openai.chat.completions.create({ model: "gpt-fake", messages, stream: true }),
    );
    const claude = await anthropic.messages.create({
      model: "claude-fake",
      max_tokens: 64,
      messages,
    });
    const plain = await httpPost(`${base}/v1/chat/completions`, {
      model: "gpt-fake",
      messages: [{ role: "user", content: "plain node:http" }],
    });
    return {
      chat: chat.choices[0]?.message.content,
      stream: stream.map((c) => c.choices[0]?.delta?.content ?? "").join(""),
      claude: claude.content[0]?.type === "text" ? claude.content[0].text : undefined,
      plain: (JSON.parse(plain.body) as { choices: { message: { content: string } }[] }).choices[0]
        ?.message.content,
    };
  });
}

/** A JSON POST with node:http, as libraries that predate fetch make it. */
function httpPost(url: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json", authorization: KEY } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

function httpGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
      .on("error", reject);
  });
}

describe("interceptGlobally", () => {
  it("records every model call of clients made without our fetch, and replays them with the provider gone", async () => {
    handle = await interceptGlobally({ recorder: sandbox.recorder("record") });
    const live = await app(provider.url);
    expect(provider.calls).toBe(4);
    expect(live.chat).toMatch(/reply #1/);
    expect(live.plain).toMatch(/reply #4/);
    expect(handle.recorder.stats.recorded).toBe(4);
    await handle.restore();

    const base = provider.url;
    await provider.close();
    handle = await interceptGlobally({ recorder: sandbox.recorder("replay") });
    const replayed = await app(base);
    expect(replayed).toEqual(live);
    expect(handle.recorder.stats.hits).toBe(4);
    const bytes = await sandbox.bytes();
    expect(bytes.includes(KEY)).toBe(false);
  });

  it("gives exactly createFetch's identity: a createFetch client replays what global mode recorded", async () => {
    handle = await interceptGlobally({ recorder: sandbox.recorder("record") });
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, maxRetries: 0 });
    const live = await withInvocation({ role: "planner" }, () =>
      openai.chat.completions.create({ model: "gpt-fake", messages, temperature: 0 }),
    );
    await handle.restore();
    handle = undefined;
    const base = provider.url;
    await provider.close();

    const recorder = sandbox.recorder("replay");
    const explicit = new OpenAI({
      apiKey: KEY,
      baseURL: `${base}/v1`,
      maxRetries: 0,
      fetch: createFetch({ recorder }),
    });
    const replayed = await withInvocation({ role: "planner" }, () =>
      explicit.chat.completions.create({ model: "gpt-fake", messages, temperature: 0 }),
    );
    expect(replayed.choices[0]?.message.content).toBe(live.choices[0]?.message.content);
    expect(recorder.stats.hits).toBe(1);
  });

  it("passes non-model requests through untouched, and does not record them", async () => {
    handle = await interceptGlobally({ recorder: sandbox.recorder("record") });
    expect(await httpGet(`${provider.url}/health`)).toBe(404);
    const res = await fetch(`${provider.url}/v1/models`);
    expect(res.status).toBe(404);
    expect(provider.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /health",
      "GET /v1/models",
    ]);
    // Sent by node:http itself, not re-made through fetch (which adds a user-agent).
    expect(provider.requests[0]?.headers["user-agent"]).toBeUndefined();
    expect(handle.recorder.stats.recorded).toBe(0);
  });

  it("answers a replay miss as createFetch does: the SDK's own NotFoundError carrying the report", async () => {
    handle = await interceptGlobally({ recorder: sandbox.recorder("replay") });
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, maxRetries: 0 });
    const error = await openai.chat.completions
      .create({ model: "gpt-fake", messages })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(String((error as Error).message)).toMatch(/INVOCACHE_MODE=record|re-record/i);
    expect(provider.calls).toBe(0);
  });

  it("restore() puts fetch, node:http and node:https back, and nothing is intercepted after it", async () => {
    const before = {
      fetch: globalThis.fetch,
      request: http.request,
      get: http.get,
      httpsRequest: https.request,
    };
    handle = await interceptGlobally({ recorder: sandbox.recorder("record") });
    expect(globalThis.fetch).not.toBe(before.fetch);
    await handle.restore();
    await handle.restore(); // idempotent
    expect({
      fetch: globalThis.fetch,
      request: http.request,
      get: http.get,
      httpsRequest: https.request,
    }).toEqual(before);
    expect(globalThis.fetch).toBe(before.fetch);

    const replaying = sandbox.recorder("replay");
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${provider.url}/v1`, maxRetries: 0 });
    await openai.chat.completions.create({ model: "gpt-fake", messages });
    expect(provider.calls).toBe(1); // reached the provider: not replayed, not refused
    expect(replaying.stats.misses).toBe(0);
  });

  it("refuses a second interception while one is on, and allows one after restore()", async () => {
    handle = await interceptGlobally({ recorder: sandbox.recorder("record") });
    await expect(interceptGlobally({ recorder: sandbox.recorder("record") })).rejects.toThrow(
      InvalidOptionError,
    );
    await handle.restore();
    handle = await interceptGlobally({ store: sandbox.url, mode: "record" });
    expect(handle.recorder.mode).toBe("record");
  });
});
