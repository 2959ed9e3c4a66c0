/**
 * The proxy's refusals and limits, over real loopback HTTP: token on a
 * public bind, credentials never stored, oversized and malformed bodies,
 * unknown upstreams and sessions, bad context headers, cassette folders,
 * slow clients, a broken store.
 */
import { connect } from "node:net";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createProxy, type InvocacheProxy, type ProxyOptions } from "../../src/proxy/index.js";
import { cassetteFiles } from "../../src/source/index.js";
import { openStore } from "../../src/store/index.js";
import { sdkSuite } from "../helpers/sdk-suite.js";
import { tempDir } from "../helpers/tmp.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-live-");

const open: InvocacheProxy[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});

async function proxy(extra: Partial<ProxyOptions> = {}) {
  const p = await createProxy({
    store: sandbox.url,
    mode: "auto",
    env: {},
    upstreams: { openai: provider.url, gemini: provider.url },
    ...extra,
  });
  open.push(p);
  return p;
}

const chat = JSON.stringify({ model: "gpt-fake", messages: [{ role: "user", content: "hi" }] });
const post = (url: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, ...headers },
    body,
  });

async function entries(url: string): Promise<number> {
  const store = openStore(url);
  let n = 0;
  for await (const [key] of store.list("")) if (key.includes(":e:")) n++;
  await store.close();
  return n;
}

describe("proxy safety", () => {
  it("refuses to bind a non-loopback address without a token; with one, a request without it is 401", async () => {
    await expect(
      createProxy({ store: sandbox.url, host: "0.0.0.0", env: {} }),
    ).rejects.toMatchObject({
      name: "ProxyError",
      code: "ERR_PROXY_TOKEN_REQUIRED",
      field: "host",
    });
    const p = await proxy({ host: "0.0.0.0", token: "t0ken-t0ken" });
    const none = await fetch(`${p.url}/_invocache/health`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { message: string } }).error.message).toContain(
      "x-invocache-token",
    );
    // The upstream credential is not the token.
    const bearer = await post(`${p.url}/openai/v1/chat/completions`, chat, {
      authorization: "Bearer t0ken-t0ken",
    });
    expect(bearer.status).toBe(401);
    expect(provider.calls).toBe(0);
    const ok = await fetch(`${p.url}/_invocache/health`, {
      headers: { "x-invocache-token": "t0ken-t0ken" },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, mode: "auto" });
  });

  it("sends credentials upstream and never stores them; replay needs no key; context headers never go upstream", async () => {
    const p = await proxy();
    const live = await post(`${p.url}/openai/v1/chat/completions`, chat, {
      "x-invocache-role": "planner",
      "x-api-key": KEY,
    });
    expect(live.status).toBe(200);
    const g = await post(
      `${p.url}/gemini/v1beta/models/gemini-fake:generateContent?key=${KEY}`,
      JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      { "x-goog-api-key": KEY },
    );
    expect(g.status).toBe(200);
    const seen = provider.requests[0]!;
    expect(seen.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(Object.keys(seen.headers).filter((h) => h.startsWith("x-invocache-"))).toEqual([]);
    await p.close();
    expect((await sandbox.bytes()).includes(KEY)).toBe(false);

    const rep = await proxy({ mode: "replay" });
    const noKey = await fetch(`${rep.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-invocache-role": "planner" },
      body: chat,
    });
    expect(noKey.status).toBe(200);
    expect(provider.calls).toBe(2);
  });

  it("answers 413 with a JSON error for a body over the limit, and stores nothing", async () => {
    const p = await proxy({ maxBodyBytes: 1024 });
    const big = JSON.stringify({
      model: "gpt-fake",
      messages: [{ role: "user", content: "x".repeat(4096) }],
    });
    const res = await post(`${p.url}/openai/v1/chat/completions`, big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "larger than 1024 bytes",
    );
    expect(provider.calls).toBe(0);
    await p.close();
    expect(await entries(sandbox.url)).toBe(0);
  });

  it("reads a body sent in chunks without a length, and cuts one that passes the limit mid-stream", async () => {
    const p = await proxy({ maxBodyBytes: 1024 });
    const port = Number(new URL(p.url).port);
    /** POST `parts` as chunked transfer coding, a pause between them; the raw answer. */
    const chunked = (parts: string[]) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, "127.0.0.1", async () => {
          socket.write(
            `POST /openai/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${KEY}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
          );
          for (const part of parts) {
            await new Promise((r) => setTimeout(r, 20));
            if (socket.destroyed) break;
            socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
          }
          if (!socket.destroyed) socket.write("0\r\n\r\n");
        });
        let text = "";
        socket.on("data", (d) => {
          text += d.toString();
        });
        socket.on("close", () => resolve(text));
        socket.on("error", () => {});
      });
    const whole = await chunked([chat.slice(0, 10), chat.slice(10, 30), chat.slice(30)]);
    expect(whole).toMatch(/^HTTP\/1\.1 200 /);
    expect(provider.calls).toBe(1);
    // A valid call of ~1,200 bytes in 300-byte chunks: reading stops at the limit; nothing goes upstream.
    const big = JSON.stringify({
      model: "gpt-fake",
      messages: [{ role: "user", content: "x".repeat(1150) }],
    });
    const parts = Array.from({ length: Math.ceil(big.length / 300) }, (_, i) =>
      big.slice(i * 300, i * 300 + 300),
    );
    const over = await chunked(parts);
    expect(over).not.toMatch(/^HTTP\/1\.1 200 /);
    expect(provider.calls).toBe(1);
    await p.close();
    expect(await entries(sandbox.url)).toBe(1);
  });

  it("lets go of a call whose client closes before its body ends: nothing sent upstream or stored", async () => {
    const p = await proxy();
    const port = Number(new URL(p.url).port);
    await new Promise<void>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `POST /openai/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n${chat.slice(0, 20)}`,
        );
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on("close", () => resolve());
      socket.on("error", () => {});
    });
    // The call ends (no waiting on a body that will never come).
    for (let i = 0; i < 100 && p.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(p.inFlight).toBe(0);
    expect(provider.calls).toBe(0);
    await p.close();
    expect(await entries(sandbox.url)).toBe(0);
  });

  it("answers malformed JSON with a 400 naming the problem, never forwarding it", async () => {
    const p = await proxy();
    const res = await post(`${p.url}/openai/v1/chat/completions`, '{"model": ');
    expect(res.status).toBe(400);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "not valid JSON",
    );
    expect(provider.calls).toBe(0);
  });

  it("answers a JSON body that is not UTF-8 with a 400, never forwarding it (in replay it would go live)", async () => {
    // Valid JSON once decoded leniently (U+FFFD in a string), not valid UTF-8:
    // createFetch reads such a body as no JSON call at all and passes it
    // through, so only the proxy's refusal keeps it from the upstream.
    const p = await proxy({ mode: "replay" });
    const body = Buffer.concat([
      Buffer.from('{"model":"gpt-fake","messages":[{"role":"user","content":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}]}'),
    ]);
    const res = await post(`${p.url}/openai/v1/chat/completions`, body);
    expect(res.status).toBe(400);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "not valid UTF-8",
    );
    expect(provider.calls).toBe(0);
  });

  it("answers an unknown upstream with a 404 naming the known ones and the --upstream fix", async () => {
    const p = await proxy();
    const res = await post(`${p.url}/ollama/v1/chat/completions`, chat);
    expect(res.status).toBe(404);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    expect(message).toContain("openai, anthropic, gemini");
    expect(message).toContain("--upstream ollama=URL");
  });

  it("refuses bad context: a malformed attempt header, an unknown mode, an unknown session, a bad session field", async () => {
    const p = await proxy();
    const attempt = await post(`${p.url}/openai/v1/chat/completions`, chat, {
      "x-invocache-attempt": "-1",
    });
    expect(attempt.status).toBe(400);
    expect(((await attempt.json()) as { error: { message: string } }).error.message).toContain(
      "x-invocache-attempt must be an integer >= 0",
    );
    const mode = await post(`${p.url}/openai/v1/chat/completions`, chat, {
      "x-invocache-mode": "sometimes",
    });
    expect(mode.status).toBe(400);
    const session = await post(`${p.url}/_session/nope/openai/v1/chat/completions`, chat);
    expect(session.status).toBe(400);
    expect(((await session.json()) as { error: { message: string } }).error.message).toContain(
      "PUT /_invocache/sessions/nope",
    );
    const bad = await fetch(`${p.url}/_invocache/sessions/s1`, {
      method: "PUT",
      body: JSON.stringify({ attempt: 1.5 }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain(
      "attempt",
    );
    const patch = async (body: unknown) =>
      (
        await fetch(`${p.url}/_invocache/sessions/s1`, {
          method: "PATCH",
          body: JSON.stringify(body),
        })
      ).json();
    expect(await patch({ attempt: 2, role: "planner" })).toEqual({ attempt: 2, role: "planner" });
    expect(await patch({ role: null })).toEqual({ attempt: 2 });
    expect((await fetch(`${p.url}/_invocache/sessions/s1`, { method: "DELETE" })).status).toBe(204);
    expect(provider.calls).toBe(0);
  });

  it("writes each call to the cassette its header names under a folder store, and refuses a path leaving the folder", async () => {
    const dir = tempDir("proxy-cassettes");
    const p = await proxy({ store: dir });
    const one = await post(`${p.url}/openai/v1/chat/completions`, chat, {
      "x-invocache-cassette": "tests/test_plan.yaml",
    });
    expect(one.status).toBe(200);
    const none = await post(`${p.url}/openai/v1/chat/completions`, chat);
    expect(none.status).toBe(400);
    const leaving = await post(`${p.url}/openai/v1/chat/completions`, chat, {
      "x-invocache-cassette": "../outside.yaml",
    });
    expect(leaving.status).toBe(400);
    expect(((await leaving.json()) as { error: { message: string } }).error.message).toContain(
      "leaves the cassette folder",
    );
    await p.close();
    expect(cassetteFiles(dir)).toEqual([join(dir, "tests", "test_plan.yaml")]);
    expect(provider.calls).toBe(1);
  });

  it("drops a client that does not finish sending its headers in time", async () => {
    const p = await proxy({ headersTimeoutMs: 300 });
    const port = Number(new URL(p.url).port);
    const closed = await new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write("POST /openai/v1/chat/completions HTTP/1.1\r\nhost: x\r\n");
      });
      let text = "";
      socket.on("data", (d) => {
        text += d.toString();
      });
      socket.on("close", () => resolve(text));
      socket.on("error", () => {});
    });
    expect(closed).toMatch(/^HTTP\/1\.1 408|^$/);
  });

  it("answers a broken store with a 502 that SDKs do not retry, and a clear message", async () => {
    const p = await proxy({ store: "redis://127.0.0.1:1?timeoutMs=300", mode: "replay" });
    let sent = 0;
    const client = new OpenAI({
      apiKey: KEY,
      baseURL: `${p.url}/openai/v1`,
      maxRetries: 2,
      fetch: (input, init) => {
        sent++;
        return globalThis.fetch(input, init);
      },
    });
    const error = await client.chat.completions
      .create({ model: "gpt-fake", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as Error).message).toContain("store failed");
    expect(sent).toBe(1);
    expect(provider.calls).toBe(0);
  });
});
