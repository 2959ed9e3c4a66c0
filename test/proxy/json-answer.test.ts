/**
 * The proxy's JSON replay path: a replayed (or just recorded) JSON answer is
 * written to the socket from its recording, without a WHATWG Response. Each
 * answer is compared, byte for byte, with what the path it replaced sends
 * for the same store and request: `createFetch`'s Response written by
 * `sendResponse` (status, status text, headers, body), for recordings as
 * createFetch makes them and as a hand edit leaves them; and every check
 * `createFetch` makes before serving a recording is made on this path too.
 */
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createFetch,
  createFetchAnswerer,
  describeHttpCall,
  invocationCall,
  type JsonAnswer,
  VOLATILE_BODY_FIELDS,
} from "../../src/adapters/index.js";
import { sendResponse } from "../../src/proxy/http.js";
import { createProxy, type InvocacheProxy } from "../../src/proxy/index.js";
import { createRecorder } from "../../src/recorder/index.js";
import { sqliteSandbox } from "../adapters/helpers.js";

type Sandbox = Awaited<ReturnType<typeof sqliteSandbox>>;

/** A provider on loopback answering chat calls with JSON and headers worth keeping. */
async function startUpstream(): Promise<{ url: string; calls: number; server: Server }> {
  const state = { url: "", calls: 0, server: undefined as unknown as Server };
  state.server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      text += c;
    });
    req.on("end", () => {
      state.calls++;
      const sent = JSON.parse(text) as { messages: { content: string }[] };
      const body = JSON.stringify({
        id: `chatcmpl-${state.calls}`,
        object: "chat.completion",
        model: "gpt-fake",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: `héllo ✓ ${sent.messages[0]?.content}` },
            finish_reason: "stop",
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      });
      res.writeHead(200, "OK", {
        "content-type": "application/json; charset=utf-8",
        "x-request-id": `req_${state.calls}`,
        "openai-version": "2020-10-01",
        "x-ratelimit-remaining-requests": "99",
        "set-cookie": "session=secret",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  await new Promise<void>((r) => state.server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

/**
 * The path the proxy used before: `createFetch` on the same store (replay),
 * its Response written by `sendResponse`. Errors are answered as the proxy
 * answers an error that is not its own (502, the message in the body).
 */
async function startOldPath(
  store: string,
  upstream: string,
): Promise<{ url: string; server: Server }> {
  const recorder = createRecorder({ store, mode: "replay", env: {} });
  const fetch = createFetch({ recorder });
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      try {
        const response = await fetch(`${upstream}${(req.url ?? "").replace(/^\/openai/, "")}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await sendResponse(res, response);
      } catch (error) {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(String((error as Error).message));
      }
    })();
  });
  server.on("close", () => void recorder.close());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

interface Raw {
  status: number;
  statusText: string;
  /** Header lines as sent, minus the connection's own (date, keep-alive, framing). */
  headers: [string, string][];
  body: Buffer;
  contentLength: string | undefined;
}

const FRAMING = new Set([
  "date",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
]);

/** One POST over a fresh connection; the answer as it came off the wire. */
function post(url: string, body: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
        agent: false,
      },
      (res) => {
        readAll(res).then((buf) => {
          const headers: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = (res.rawHeaders[i] as string).toLowerCase();
            if (!FRAMING.has(name)) headers.push([name, res.rawHeaders[i + 1] as string]);
          }
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? "",
            headers,
            body: buf,
            contentLength: res.headers["content-length"],
          });
        }, reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const chat = (content: string) =>
  JSON.stringify({ model: "gpt-fake", messages: [{ role: "user", content }] });

let sandbox: Sandbox;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  sandbox = await sqliteSandbox();
  upstream = await startUpstream();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await new Promise<void>((r) => upstream.server.close(() => r()));
  await sandbox.cleanup();
});

async function proxy(mode: "auto" | "replay"): Promise<InvocacheProxy> {
  const p = await createProxy({
    store: sandbox.url,
    mode,
    env: {},
    upstreams: { openai: upstream.url },
  });
  closers.push(() => p.close());
  return p;
}

async function oldPath(): Promise<string> {
  const old = await startOldPath(sandbox.url, upstream.url);
  closers.push(
    () =>
      new Promise<void>((r) => {
        old.server.closeAllConnections();
        old.server.close(() => r());
      }),
  );
  return old.url;
}

/** Store `value` as the recording of `body` sent to the upstream's chat path, as a hand edit would. */
async function storeRaw(body: string, value: unknown): Promise<void> {
  const recorder = createRecorder({ store: sandbox.url, mode: "record", env: {} });
  const url = new URL(`${upstream.url}/v1/chat/completions`);
  const [req, opts] = invocationCall(
    describeHttpCall(url, JSON.parse(body), new Set(VOLATILE_BODY_FIELDS)),
  );
  await recorder.call(req, async () => value, opts);
  await recorder.close();
}

describe("proxy JSON answers written from the recording", () => {
  it("answers exactly what createFetch's Response carried: status, headers, body bytes", async () => {
    const recording = await proxy("auto");
    const bodies = [chat("plan"), chat("build ✓ ünïcode"), chat("x".repeat(5000))];
    const recorded: Raw[] = [];
    for (const b of bodies)
      recorded.push(await post(`${recording.url}/openai/v1/chat/completions`, b));
    expect(upstream.calls).toBe(3);

    const replay = await proxy("replay");
    const old = await oldPath();
    for (const [i, b] of bodies.entries()) {
      const fast = await post(`${replay.url}/openai/v1/chat/completions`, b);
      const before = await post(`${old}/openai/v1/chat/completions`, b);
      expect(fast.status).toBe(200);
      expect(fast.statusText).toBe(before.statusText);
      expect(fast.headers).toEqual(before.headers);
      expect(fast.body.equals(before.body)).toBe(true);
      // The answer while recording went out the same way.
      expect(recorded[i]?.headers).toEqual(fast.headers);
      expect(recorded[i]?.body.equals(fast.body)).toBe(true);
      // Framed by its length (the old path sent it chunked).
      expect(fast.contentLength).toBe(String(fast.body.length));
      expect(fast.headers).toContainEqual(["x-request-id", `req_${i + 1}`]);
      expect(fast.headers.map(([n]) => n)).not.toContain("set-cookie");
    }
    expect(upstream.calls).toBe(3);
  });

  it("writes hand-edited headers as Headers reads them, and falls back for odd ones", async () => {
    const cases: [string, Record<string, unknown>][] = [
      // Mixed case and padded values: lowercased and trimmed, as Headers does.
      ["padded", { "Content-Type": " application/json ", "X-Request-Id": "\treq_pad  " }],
      // No content type recorded: the default one.
      ["untyped", { "x-request-id": "req_none" }],
      // One name in two cases: Headers joins them; the proxy leaves that to it.
      ["twice", { "x-a": "1", "X-A": "2", "content-type": "application/json" }],
      // A hop-by-hop header in a recording is not forwarded.
      ["hop", { connection: "close", "content-type": "application/json", "x-b": "b" }],
    ];
    for (const [name, headers] of cases) {
      await storeRaw(chat(name), {
        status: 200,
        statusText: "Fine",
        headers,
        body: { id: name, choices: [] },
      });
    }
    const replay = await proxy("replay");
    const old = await oldPath();
    for (const [name] of cases) {
      const fast = await post(`${replay.url}/openai/v1/chat/completions`, chat(name));
      const before = await post(`${old}/openai/v1/chat/completions`, chat(name));
      expect(fast.status, name).toBe(200);
      expect(fast.statusText, name).toBe("Fine");
      expect(fast.headers, name).toEqual(before.headers);
      expect(fast.body.toString(), name).toBe(before.body.toString());
      expect(JSON.parse(fast.body.toString()), name).toEqual({ id: name, choices: [] });
    }
  });

  it("serves no recording createFetch would refuse: an unchosen error status, a stream for a plain call, a miss", async () => {
    await storeRaw(chat("error"), {
      status: 500,
      headers: { "content-type": "application/json" },
      body: { secret: "must not be served" },
    });
    await storeRaw(chat("stream"), {
      status: 200,
      headers: { "content-type": "text/event-stream" },
      sse: "not a list",
    });
    const replay = await proxy("replay");
    for (const name of ["error", "stream"]) {
      const fast = await post(`${replay.url}/openai/v1/chat/completions`, chat(name));
      expect(fast.status, name).toBe(502);
      expect(fast.body.toString(), name).toContain("re-record it");
      expect(fast.body.toString(), name).not.toContain("must not be served");
    }
    const miss = await post(`${replay.url}/openai/v1/chat/completions`, chat("never recorded"));
    expect(miss.status).toBe(404);
    expect(miss.headers).toContainEqual(["x-invocache-miss", "1"]);
    expect(JSON.parse(miss.body.toString()).error.code).toBe("replay_miss");
    expect(upstream.calls).toBe(0);
  });

  it("createFetchAnswerer.answer: the data of createFetch's Response, and its Response on demand", async () => {
    const recorder = sandbox.recorder("auto");
    const { fetch, answer } = createFetchAnswerer({ recorder });
    const url = `${upstream.url}/v1/chat/completions`;
    const init = {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chat("a"),
    };
    const first = await answer(url, init);
    expect(first).not.toBeInstanceOf(Response);
    const data = first as JsonAnswer;
    const response = await fetch(url, init);
    expect(upstream.calls).toBe(1);
    expect(data.status).toBe(response.status);
    expect(data.statusText).toBe(response.statusText);
    expect(data.text).toBe(await response.text());
    expect(new Headers(data.headers as Record<string, string>)).toEqual(response.headers);
    const rebuilt = data.toResponse();
    expect(await rebuilt.text()).toBe(data.text);
    expect([...rebuilt.headers]).toEqual([...response.headers]);
    // Not a model call: passed through as a Response.
    const passed = await answer(`${upstream.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: chat("b"),
    });
    expect(passed).toBeInstanceOf(Response);
  });
});
