/**
 * A client that closes its connection as soon as it has read `data: [DONE]`
 * while the upstream still holds its end open (a slow close, a proxy in
 * between) has read a complete answer: the recording must be kept, not
 * thrown away as a cut-off stream. A stream cut before its final event is
 * still never stored.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createProxy, type InvocacheProxy } from "../../src/proxy/index.js";
import { sqliteSandbox } from "../adapters/helpers.js";

type Sandbox = Awaited<ReturnType<typeof sqliteSandbox>>;
let box: Sandbox;
let server: Server;
let upstream: string;
let calls = 0;
/** Send `[DONE]` (true) or stop before it (false); either way the upstream then lingers. */
let sendDone = true;
const open: InvocacheProxy[] = [];

const chunk = (text: string, last: boolean) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-fake",
    choices: [{ index: 0, delta: { content: text }, finish_reason: last ? "stop" : null }],
  })}\n\n`;

beforeEach(async () => {
  box = await sqliteSandbox();
  calls = 0;
  sendDone = true;
  server = createServer(async (req, res) => {
    for await (const _ of req) {
      // drain the request body
    }
    calls++;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("hello ", false));
    if (sendDone) res.write(`${chunk("world", true)}data: [DONE]\n\n`);
    // ... and the connection stays open until the test ends.
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  for (const p of open.splice(0)) await p.close();
  await box.cleanup();
});

async function proxy(mode: "auto" | "replay"): Promise<InvocacheProxy> {
  const p = await createProxy({ store: box.url, mode, env: {}, upstreams: { openai: upstream } });
  open.push(p);
  return p;
}

/** POST a streamed chat call; read until `until` appears (or the end), then destroy the socket. */
function streamUntil(p: InvocacheProxy, until: string): Promise<string> {
  const body = JSON.stringify({
    model: "gpt-fake",
    stream: true,
    messages: [{ role: "user", content: "say hello world" }],
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${p.url}/openai/v1/chat/completions`,
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
          if (text.includes(until)) {
            req.destroy();
            resolve(text);
          }
        });
        res.on("end", () => resolve(text));
      },
    );
    req.on("error", (e) => (e.message.includes("socket hang up") ? undefined : reject(e)));
    req.end(body);
  });
}

const waitFor = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
};

describe("proxy: a client closing right after the final event", () => {
  it("keeps the recording: a complete stream replays with the upstream gone", async () => {
    const auto = await proxy("auto");
    const first = await streamUntil(auto, "[DONE]");
    expect(first).toContain("world");
    expect(calls).toBe(1);
    await auto.close(); // drains pending writes
    server.closeAllConnections();
    const replay = await proxy("replay");
    const again = await streamUntil(replay, "[DONE]");
    expect(again).toContain('"content":"hello "');
    expect(again).toContain('"content":"world"');
    expect(calls).toBe(1);
  });

  it("still drops a stream cut before its final event", async () => {
    sendDone = false;
    const auto = await proxy("auto");
    const first = await streamUntil(auto, "hello");
    expect(first).toContain("hello");
    await waitFor(async () => calls === 1);
    await auto.close();
    server.closeAllConnections();
    const replay = await proxy("replay");
    const res = await fetch(`${replay.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-fake",
        stream: true,
        messages: [{ role: "user", content: "say hello world" }],
      }),
    });
    expect(res.status).toBe(404);
    await res.text();
  });
});
