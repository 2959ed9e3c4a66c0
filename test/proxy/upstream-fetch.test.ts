/**
 * The proxy's upstream fetch over node:http (src/proxy/upstream-fetch.ts),
 * against real HTTP servers on loopback: JSON both ways (and compressed),
 * SSE reaching the caller chunk by chunk while the upstream is still
 * sending, redirects (307/308 repeat the POST with its body, 302 turns it
 * into a GET, another origin gets no credentials), an unreachable upstream
 * (the proxy's 502, no credential in it), big bodies both ways; and the
 * same through `createProxy`, which uses it by default.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProxy } from "../../src/proxy/index.js";
import { createUpstreamFetch } from "../../src/proxy/upstream-fetch.js";
import { sqliteSandbox } from "../adapters/helpers.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void;

async function server(handler: Handler): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const s = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    handler(req, body, res);
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, server: s };
}

const servers: Server[] = [];
const up = createUpstreamFetch();
let gate: () => void = () => {};

let main: Awaited<ReturnType<typeof server>>;
let other: Awaited<ReturnType<typeof server>>;

beforeAll(async () => {
  other = await server((_req, body, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ other: true, bytes: body.length }));
  });
  main = await server((req, body, res) => {
    const path = req.url ?? "";
    if (path === "/json") {
      res.writeHead(201, "Made", { "content-type": "application/json", "x-up": "1" });
      res.end(JSON.stringify({ echo: JSON.parse(body.toString("utf8")) }));
    } else if (path === "/gzip") {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ zipped: "yes" })));
    } else if (path === "/sse") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"n":1}\n\n');
      // The second event only once the test has seen the first one.
      gate = () => res.end('data: {"n":2}\n\ndata: [DONE]\n\n');
    } else if (path === "/r307" || path === "/r308") {
      res.writeHead(Number(path.slice(2)), { location: "/json" });
      res.end("moved");
    } else if (path === "/r302") {
      res.writeHead(302, { location: "/get" });
      res.end();
    } else if (path === "/get") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, bytes: body.length }));
    } else if (path === "/away") {
      res.writeHead(307, { location: `${other.url}/there` });
      res.end();
    } else if (path === "/big") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(body);
    } else if (path === "/v1/chat/completions") {
      const { stream } = JSON.parse(body.toString("utf8")) as { stream?: boolean };
      if (stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "hel" }, finish_reason: null }] })}\n\n`,
        );
        gate = () =>
          res.end(
            `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "lo" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
          );
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [
            { index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" },
          ],
        }),
      );
    } else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end("{}");
    }
  });
  servers.push(main.server, other.server);
});

afterAll(async () => {
  up.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const post = (body: string | Buffer, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: {
    "content-type": "application/json",
    authorization: "Bearer sk-test-secret",
    ...headers,
  },
  body,
});

/** Read one chunk of a stream, as text. */
async function nextText(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value, done } = await reader.read();
  return done ? "" : Buffer.from(value).toString("utf8");
}

describe("createUpstreamFetch", () => {
  it("JSON: method, headers and body go up; status, status text, headers and body come back", async () => {
    main.seen.length = 0;
    const res = await up.fetch(`${main.url}/json`, post('{"a":1}'));
    expect(res.status).toBe(201);
    expect(res.statusText).toBe("Made");
    expect(res.headers.get("x-up")).toBe("1");
    expect(await res.json()).toStrictEqual({ echo: { a: 1 } });
    const seen = main.seen[0]!;
    expect(seen.method).toBe("POST");
    expect(seen.headers.authorization).toBe("Bearer sk-test-secret");
    expect(seen.headers.host).toBe(new URL(main.url).host);
    expect(seen.headers["content-length"]).toBe("7");
  });

  it("reuses its connection (keep-alive) and decodes a gzip body", async () => {
    const a = await up.fetch(`${main.url}/gzip`, { method: "GET" });
    expect(await a.json()).toStrictEqual({ zipped: "yes" });
    main.seen.length = 0;
    await (await up.fetch(`${main.url}/json`, post("{}"))).text();
    await (await up.fetch(`${main.url}/json`, post("{}"))).text();
    expect(main.seen.map((s) => s.headers.connection)).toStrictEqual(["keep-alive", "keep-alive"]);
  });

  it("SSE: each event reaches the caller while the upstream is still sending", async () => {
    const res = await up.fetch(`${main.url}/sse`, post("{}"));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    expect(await nextText(reader)).toBe('data: {"n":1}\n\n');
    gate(); // only now does the upstream send the rest
    let rest = "";
    for (let t = await nextText(reader); t !== ""; t = await nextText(reader)) rest += t;
    expect(rest).toBe('data: {"n":2}\n\ndata: [DONE]\n\n');
  });

  it("redirects: 307 and 308 repeat the POST with its body, 302 turns it into a GET", async () => {
    for (const code of ["307", "308"]) {
      main.seen.length = 0;
      const res = await up.fetch(`${main.url}/r${code}`, post('{"again":true}'));
      expect(await res.json(), code).toStrictEqual({ echo: { again: true } });
      expect(main.seen.map((s) => [s.method, s.url, s.body.toString()])).toStrictEqual([
        ["POST", `/r${code}`, '{"again":true}'],
        ["POST", "/json", '{"again":true}'],
      ]);
    }
    const res = await up.fetch(`${main.url}/r302`, post('{"x":1}'));
    expect(await res.json()).toStrictEqual({ method: "GET", bytes: 0 });
  });

  it("a redirect to another origin keeps the body but drops the credentials", async () => {
    other.seen.length = 0;
    const res = await up.fetch(`${main.url}/away`, post('{"b":2}', { "x-api-key": "sk-ant-x" }));
    expect(await res.json()).toStrictEqual({ other: true, bytes: 7 });
    expect(other.seen[0]!.headers.authorization).toBeUndefined();
    expect(other.seen[0]!.headers["x-api-key"]).toBeUndefined();
    expect(other.seen[0]!.headers["content-type"]).toBe("application/json");
  });

  it("big bodies both ways arrive whole", async () => {
    const big = Buffer.alloc(6 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    const res = await up.fetch(`${main.url}/big`, { method: "POST", body: big });
    expect(Buffer.from(await res.arrayBuffer()).equals(big)).toBe(true);
  });

  it("an unreachable upstream rejects as fetch does (TypeError, the socket error as cause)", async () => {
    const dead = await server(() => {});
    const url = dead.url;
    await new Promise((r) => dead.server.close(r));
    const error = await up.fetch(`${url}/json`, post("{}")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe("ECONNREFUSED");
  });
});

describe("createProxy's default upstream fetch", () => {
  it("records JSON and a stream (teed as it arrives) through node:http; an unreachable upstream is the proxy's 502 without the key", async () => {
    const box = await sqliteSandbox();
    const proxy = await createProxy({
      store: box.url,
      mode: "auto",
      env: {},
      upstreams: { up: main.url, gone: "http://127.0.0.1:9" },
    });
    try {
      const chat = (stream: boolean) =>
        fetch(`${proxy.url}/up/v1/chat/completions`, {
          ...post(
            JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "hi" }] }),
          ),
        });
      const json = await chat(false);
      expect(json.status).toBe(200);
      expect(
        ((await json.json()) as { choices: [{ message: { content: string } }] }).choices[0].message
          .content,
      ).toBe("hello");

      const streamed = await chat(true);
      const reader = streamed.body!.getReader();
      expect(await nextText(reader)).toContain('"content":"hel"');
      gate(); // the rest only after the client has the first event
      let rest = "";
      for (let t = await nextText(reader); t !== ""; t = await nextText(reader)) rest += t;
      expect(rest).toContain('"content":"lo"');
      expect(rest).toContain("data: [DONE]");

      const failed = await fetch(`${proxy.url}/gone/v1/chat/completions`, post("{}"));
      expect(failed.status).toBe(502);
      const text = await failed.text();
      expect(text).toContain("could not reach the upstream");
      expect(text).not.toContain("sk-test-secret");
    } finally {
      await proxy.close();
      await box.cleanup();
    }
  });
});
