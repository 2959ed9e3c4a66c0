/**
 * The proxy with the real `openai` and `@anthropic-ai/sdk` packages (and
 * plain fetch for Gemini), pointed at `invocache proxy` in front of the fake
 * provider on loopback: record, stop the provider, replay; identities equal
 * to createFetch's in both directions on one store; RELOOP through the proxy.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createFetch, withInvocation } from "../../src/adapters/index.js";
import { createProxy, type InvocacheProxy, type ProxyOptions } from "../../src/proxy/index.js";
import { collect, storedResponses } from "../adapters/helpers.js";
import { sdkSuite } from "../helpers/sdk-suite.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-live-");

const open: InvocacheProxy[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});

async function proxy(mode: ProxyOptions["mode"], extra: Partial<ProxyOptions> = {}) {
  const p = await createProxy({
    store: sandbox.url,
    mode,
    env: {},
    upstreams: { openai: provider.url, anthropic: provider.url, gemini: provider.url },
    ...extra,
  });
  open.push(p);
  return p;
}

function openai(p: InvocacheProxy, fetch?: typeof globalThis.fetch, maxRetries = 0): OpenAI {
  return new OpenAI({
    apiKey: KEY,
    baseURL: `${p.url}/openai/v1`,
    maxRetries,
    ...(fetch === undefined ? {} : { fetch }),
  });
}

function anthropic(p: InvocacheProxy, maxRetries = 0): Anthropic {
  return new Anthropic({ apiKey: KEY, baseURL: `${p.url}/anthropic`, maxRetries });
}

const messages = [
  { role: "system" as const, content: "You are terse." },
  { role: "user" as const, content: "Write the build plan" },
];

async function openaiCalls(client: OpenAI) {
  const chat = await client.chat.completions.create({ model: "gpt-fake", messages });
  const chatStream = await collect(
    await client.chat.completions.create({
      model: "gpt-fake",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  const response = await client.responses.create({ model: "gpt-fake", input: "Summarize" });
  const responseStream = await collect(
    await client.responses.create({ model: "gpt-fake", input: "Summarize", stream: true }),
  );
  return {
    chat: chat.choices[0]?.message.content,
    chatUsage: chat.usage?.total_tokens,
    chatStream: chatStream.map((c) => c.choices[0]?.delta?.content ?? "").join(""),
    streamUsage: chatStream.at(-1)?.usage?.total_tokens,
    response: response.output_text,
    responseStream: responseStream.map((e) => e.type),
  };
}

async function anthropicCalls(client: Anthropic) {
  const message = await client.messages.create({
    model: "claude-fake",
    max_tokens: 100,
    messages: [{ role: "user", content: "Review the plan" }],
  });
  const stream = await collect(
    await client.messages.create({
      model: "claude-fake",
      max_tokens: 100,
      messages: [{ role: "user", content: "Review the plan" }],
      stream: true,
    }),
  );
  return {
    text: message.content[0]?.type === "text" ? message.content[0].text : "",
    usage: message.usage.output_tokens,
    stream: stream.map((e) => e.type),
  };
}

async function geminiCalls(p: InvocacheProxy) {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Plan it" }] }] });
  const headers = { "content-type": "application/json", "x-goog-api-key": KEY };
  const json = await fetch(`${p.url}/gemini/v1beta/models/gemini-fake:generateContent`, {
    method: "POST",
    headers,
    body,
  });
  const sse = await fetch(
    `${p.url}/gemini/v1beta/models/gemini-fake:streamGenerateContent?alt=sse`,
    { method: "POST", headers, body },
  );
  return {
    status: [json.status, sse.status],
    type: sse.headers.get("content-type"),
    json: (await json.json()) as { candidates: unknown[]; usageMetadata: unknown },
    sse: await sse.text(),
  };
}

describe("invocache proxy with the real SDKs", () => {
  it("records OpenAI chat, Responses (JSON and SSE) in auto, then replays them with the provider stopped", async () => {
    const rec = await proxy("auto");
    const live = await openaiCalls(openai(rec));
    expect(provider.calls).toBe(4);
    expect(live.chat).toMatch(/^reply #1/);
    expect(live.chatUsage).toBeGreaterThan(0);
    expect(live.streamUsage).toBeGreaterThan(0);
    await rec.close();
    await provider.close();

    const rep = await proxy("replay");
    const replayed = await openaiCalls(openai(rep));
    expect(replayed).toEqual(live);
    await rep.close();
    // Usage is recorded with the answer, as createFetch records it.
    const stored = JSON.stringify(await storedResponses(sandbox.recorder("replay")));
    expect(stored).toContain("total_tokens");
    // The key went upstream only: it is nowhere in the store.
    expect((await sandbox.bytes()).includes(KEY)).toBe(false);
  });

  it("records Anthropic messages and Gemini generateContent / streamGenerateContent alt=sse, then replays them", async () => {
    const rec = await proxy("auto");
    const liveA = await anthropicCalls(anthropic(rec));
    const liveG = await geminiCalls(rec);
    expect(liveA.text).toMatch(/^reply #/);
    expect(liveA.stream).toContain("message_stop");
    expect(liveG.status).toEqual([200, 200]);
    expect(liveG.type).toContain("text/event-stream");
    expect(liveG.json.usageMetadata).toBeDefined();
    const calls = provider.calls;
    expect(calls).toBe(4);
    await rec.close();
    await provider.close();

    const rep = await proxy("replay");
    expect(await anthropicCalls(anthropic(rep))).toEqual(liveA);
    const replayedG = await geminiCalls(rep);
    expect(replayedG.json).toEqual(liveG.json);
    expect(replayedG.sse.replace(/\r/g, "")).toBe(liveG.sse.replace(/\r/g, ""));
    await rep.close();
    expect((await sandbox.bytes()).includes(KEY)).toBe(false);
  });

  it("records and replays OpenAI embeddings", async () => {
    let calls = 0;
    const upstream = createServer((req, res) => {
      calls++;
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "list",
            data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2, calls] }],
            model: "text-embedding-fake",
            usage: { prompt_tokens: 3, total_tokens: 3 },
          }),
        );
      });
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    try {
      const rec = await proxy("auto", { upstreams: { openai: url } });
      const live = await openai(rec).embeddings.create({
        model: "text-embedding-fake",
        input: "the build plan",
        encoding_format: "float",
      });
      await rec.close();
      const rep = await proxy("replay", { upstreams: { openai: url } });
      const replayed = await openai(rep).embeddings.create({
        model: "text-embedding-fake",
        input: "the build plan",
        encoding_format: "float",
      });
      expect(replayed.data[0]?.embedding).toEqual(live.data[0]?.embedding);
      expect(calls).toBe(1);
    } finally {
      await new Promise((r) => upstream.close(r));
    }
  });

  it("gives a call through the proxy createFetch's identity: a createFetch recording replays through the proxy, and the other way round", async () => {
    // Node, in process, no context: record.
    const recorder = sandbox.recorder("auto");
    const direct = new OpenAI({
      apiKey: KEY,
      baseURL: `${provider.url}/v1`,
      fetch: createFetch({ recorder }),
      maxRetries: 0,
    });
    const first = await direct.chat.completions.create({ model: "gpt-fake", messages });
    const nodeId = recorder.last?.id;
    await recorder.close();
    expect(provider.calls).toBe(1);

    // Through the proxy, no header: the same identity, replayed.
    const rep = await proxy("replay");
    const viaProxy = await openai(rep).chat.completions.create({ model: "gpt-fake", messages });
    expect(viaProxy.choices[0]?.message.content).toBe(first.choices[0]?.message.content);
    await rep.close();

    // Recorded through the proxy with a role and attempt: createFetch with
    // the same context replays it, and finds the same id.
    const rec = await proxy("auto");
    const recorded = await new OpenAI({
      apiKey: KEY,
      baseURL: `${rec.url}/openai/v1`,
      maxRetries: 0,
      defaultHeaders: { "x-invocache-role": "builder", "x-invocache-attempt": "1" },
    }).chat.completions.create({ model: "gpt-fake", messages });
    expect(provider.calls).toBe(2);
    await rec.close();
    const replayer = sandbox.recorder("replay");
    const back = new OpenAI({
      apiKey: "no-key-needed",
      baseURL: `${provider.url}/v1`,
      fetch: createFetch({ recorder: replayer }),
      maxRetries: 0,
    });
    const again = await withInvocation({ role: "builder", attempt: 1 }, () =>
      back.chat.completions.create({ model: "gpt-fake", messages }),
    );
    expect(again.choices[0]?.message.content).toBe(recorded.choices[0]?.message.content);
    expect(replayer.last?.id).not.toBe(nodeId);
    expect(provider.calls).toBe(2);
  });

  it("never serves attempt 2 the rejected answer of attempt 1 (RELOOP), by header and by session path", async () => {
    const rec = await proxy("auto");
    const ask = (client: OpenAI) =>
      client.chat.completions
        .create({ model: "gpt-fake", messages })
        .then((r) => r.choices[0]?.message.content);
    const withAttempt = (p: InvocacheProxy, attempt: number) =>
      new OpenAI({
        apiKey: KEY,
        baseURL: `${p.url}/openai/v1`,
        maxRetries: 0,
        defaultHeaders: { "x-invocache-attempt": String(attempt) },
      });
    const a1 = await ask(withAttempt(rec, 1));
    // The gate rejects a1; the retry is attempt 2: a fresh call, never a1.
    const a2 = await ask(withAttempt(rec, 2));
    expect(a2).not.toBe(a1);
    expect(provider.calls).toBe(2);
    // A client that cannot add headers: a session, switched between attempts.
    const session = `${rec.url}/_invocache/sessions/t1`;
    const put = (body: unknown) =>
      fetch(session, { method: "PUT", body: JSON.stringify(body) }).then((r) => r.status);
    const viaSession = new OpenAI({
      apiKey: KEY,
      baseURL: `${rec.url}/_session/t1/openai/v1`,
      maxRetries: 0,
    });
    expect(await put({ attempt: 1 })).toBe(200);
    expect(await ask(viaSession)).toBe(a1);
    expect(await put({ attempt: 3 })).toBe(200);
    const a3 = await ask(viaSession);
    expect([a1, a2]).not.toContain(a3);
    expect(provider.calls).toBe(3);
    await rec.close();

    await provider.close();
    const rep = await proxy("replay");
    expect(await ask(withAttempt(rep, 2))).toBe(a2);
    expect(await ask(withAttempt(rep, 1))).toBe(a1);
  });

  it("answers a replay miss with a 404 the SDKs raise as NotFoundError, carrying the miss report, and do not retry", async () => {
    const rec = await proxy("auto");
    await openai(rec).chat.completions.create({ model: "gpt-fake", messages });
    await rec.close();
    const rep = await proxy("replay");
    let sent = 0;
    const counting: typeof globalThis.fetch = (input, init) => {
      sent++;
      return globalThis.fetch(input, init);
    };
    // Default retries on: a miss must not be retried.
    const client = openai(rep, counting, 2);
    const changed = [{ role: "user" as const, content: "Write the test plan" }];
    const error = await client.chat.completions
      .create({ model: "gpt-fake", messages: changed })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as Error).message).toContain("no recording");
    expect((error as Error).message).toMatch(/nearest|differ|prompt/i);
    expect(sent).toBe(1);

    const aerr = await anthropic(rep, 2)
      .messages.create({
        model: "claude-fake",
        max_tokens: 10,
        messages: [{ role: "user", content: "never recorded" }],
      })
      .catch((e: unknown) => e);
    expect(aerr).toBeInstanceOf(Anthropic.NotFoundError);
    expect((aerr as Error).message).toContain("no recording");

    // Through a session, each miss is kept for the harness to ask about.
    const misses = `${rep.url}/_invocache/sessions/m1/misses`;
    await fetch(`${rep.url}/_invocache/sessions/m1`, { method: "PUT", body: "{}" });
    expect(await (await fetch(misses)).json()).toEqual({ count: 0, misses: [] });
    const viaSession = new OpenAI({
      apiKey: KEY,
      baseURL: `${rep.url}/_session/m1/openai/v1`,
      maxRetries: 0,
    });
    await viaSession.chat.completions
      .create({ model: "gpt-fake", messages: changed })
      .catch(() => {});
    await viaSession.chat.completions.create({ model: "gpt-fake", messages }); // a hit
    const report = (await (await fetch(misses)).json()) as { count: number; misses: string[] };
    expect(report.count).toBe(1);
    expect(report.misses[0]).toContain("no recording");
    expect(report.misses[0]).toMatch(/differs in/);
    await fetch(`${rep.url}/_invocache/sessions/m1`, { method: "DELETE" });
    expect((await fetch(misses)).status).toBe(400);
    expect(provider.calls).toBe(1);
  });
});
