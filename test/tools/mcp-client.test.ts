/**
 * wrapMcpClient against a real MCP server built with @modelcontextprotocol/sdk,
 * over the in-memory transport, stdio (a child process) and Streamable HTTP on
 * 127.0.0.1. Replays run with the server stopped and a client never connected.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/store.js";
import { toolIdentity } from "../../src/identity/tool-manifest.js";
import {
  ReplayMissError,
  ToolCallError,
  ToolDivergenceError,
  ToolResultError,
} from "../../src/recorder/errors.js";
import { createRecorder } from "../../src/recorder/recorder.js";
import { runContentHash } from "../../src/recorder/run-scope.js";
import { wrapMcpClient } from "../../src/tools/mcp-client.js";
import { startHttpServer } from "./fixtures/mcp-server.js";
import {
  countLines,
  httpClient,
  inMemoryClient,
  newClient,
  newCounter,
  stdioClient,
} from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-mcp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const cassette = () => join(dir, `c${++n}.yaml`);

/** Every recorded kind of MCP request, once. */
async function session(client: ReturnType<typeof newClient>) {
  const tools = await client.listTools();
  const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
  const bad = await client.callTool({ name: "divide", arguments: { a: 1, b: 0 } });
  const res = await client.readResource({ uri: "file:///docs/readme.md" });
  const prompt = await client.getPrompt({ name: "review", arguments: { lang: "ts" } });
  return { tools, sum, bad, res, prompt };
}

describe("wrapMcpClient: record, then replay with the server stopped", () => {
  it("in-memory transport", async () => {
    const file = cassette();
    const counter = newCounter();
    const live = await inMemoryClient(counter);
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    const recorded = await session(
      wrapMcpClient(live.client, { recorder: rec, server: "calculator" }),
    );
    await rec.close();
    await rec.store.close();
    await live.close();
    expect(counter.executions).toBe(4); // add, divide, resource, prompt
    expect((recorded.sum as { content: Array<{ text: string }> }).content[0]?.text).toBe("5");
    expect((recorded.bad as { isError?: boolean }).isError).toBe(true);

    const replayer = createRecorder({ store: cassetteStore(file), mode: "replay" });
    const offline = wrapMcpClient(newClient(), { recorder: replayer, server: "calculator" });
    const replayed = await session(offline);
    expect(replayed).toEqual(JSON.parse(JSON.stringify(recorded)));
    expect(counter.executions).toBe(4);
    expect(replayer.stats.hits).toBe(5);
    await replayer.close();
    await replayer.store.close();
  });

  it("stdio (a child process), replayed after the process is gone", async () => {
    const file = cassette();
    const counterFile = join(dir, "stdio-counter");
    const { client, transport } = await stdioClient(counterFile);
    const pid = transport.pid;
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    const recorded = await session(wrapMcpClient(client, { recorder: rec, server: "calculator" }));
    await rec.close();
    await rec.store.close();
    await client.close();
    expect(countLines(counterFile)).toBe(4);
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid as number, 0)).toThrow(); // the server is stopped

    const replayer = createRecorder({ store: cassetteStore(file), mode: "replay" });
    const replayed = await session(
      wrapMcpClient(newClient(), { recorder: replayer, server: "calculator" }),
    );
    expect(replayed).toEqual(JSON.parse(JSON.stringify(recorded)));
    expect(countLines(counterFile)).toBe(4);
    await replayer.store.close();
  });

  it("Streamable HTTP on 127.0.0.1, replayed after the server is closed", async () => {
    const file = cassette();
    const counter = newCounter();
    const http = await startHttpServer(counter);
    const client = await httpClient(http.url);
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    const recorded = await session(wrapMcpClient(client, { recorder: rec, server: "calculator" }));
    await rec.store.close();
    await client.close();
    await http.close();
    expect(counter.executions).toBe(4);
    await expect(fetch(http.url)).rejects.toThrow(); // nothing listens any more

    const replayer = createRecorder({ store: cassetteStore(file), mode: "replay" });
    const replayed = await session(
      wrapMcpClient(newClient(), { recorder: replayer, server: "calculator" }),
    );
    expect(replayed).toEqual(JSON.parse(JSON.stringify(recorded)));
    expect(counter.executions).toBe(4);
    await replayer.store.close();
  });

  it("a replay miss names the tool and the argument that differs", async () => {
    const file = cassette();
    const live = await inMemoryClient(newCounter());
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    await wrapMcpClient(live.client, { recorder: rec, server: "calculator" }).callTool({
      name: "add",
      arguments: { a: 2, b: 3 },
    });
    await rec.store.close();
    await live.close();
    const replayer = createRecorder({ store: cassetteStore(file), mode: "replay" });
    const offline = wrapMcpClient(newClient(), { recorder: replayer, server: "calculator" });
    const error = await offline
      .callTool({ name: "add", arguments: { a: 2, b: 4 } })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ReplayMissError);
    expect(error.message).toContain('no recording for tool "add" on server "calculator"');
    expect(error.message).toContain("$.args.b: 3 → 4");
    await replayer.store.close();
  });

  it("an unconnected client without { server } is a TypeError saying what to pass", async () => {
    const rec = createRecorder({ store: "memory://", mode: "replay" });
    const offline = wrapMcpClient(newClient(), { recorder: rec });
    await expect(offline.callTool({ name: "add", arguments: {} })).rejects.toThrow(
      /pass \{ server: "name" \}/,
    );
    await rec.close();
  });
});

describe("wrapMcpClient: failures store nothing and name the tool", () => {
  it("a server that crashes mid-call (stdio)", async () => {
    const file = cassette();
    const { client } = await stdioClient(join(dir, "crash-counter"));
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    // Hints given here, so no tools/list lookup is recorded either.
    const wrapped = wrapMcpClient(client, {
      recorder: rec,
      server: "calculator",
      tools: { crash: { readOnlyHint: true } },
    });
    const error = await wrapped.callTool({ name: "crash", arguments: {} }).catch((e) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect(error.message).toContain('tool "calculator/crash" failed');
    expect(error.message).toContain("nothing was recorded");
    expect(rec.stats.recorded).toBe(0);
    await rec.store.close();
    await client.close().catch(() => {});
    expect(() => readFileSync(file, "utf8")).toThrow(); // the cassette was never written
  });

  it("an aborted call", async () => {
    const counter = newCounter();
    const live = await inMemoryClient(counter);
    const rec = createRecorder({ store: "memory://", mode: "record" });
    const wrapped = wrapMcpClient(live.client, {
      recorder: rec,
      server: "calculator",
      tools: { slow: { readOnlyHint: true } },
    });
    const ac = new AbortController();
    const pending = wrapped.callTool({ name: "slow", arguments: { label: "x" } }, undefined, {
      signal: ac.signal,
    });
    // Abort once the server is running the call, not after a guessed delay
    // (under load 20 ms could pass before the request reached the server).
    void (async () => {
      while (counter.byTool.slow !== 1) await new Promise((r) => setTimeout(r, 5));
      ac.abort(new Error("user cancelled"));
    })();
    const error = await pending.catch((e) => e);
    expect(error).toBeInstanceOf(ToolCallError);
    expect(error.message).toContain('tool "calculator/slow" was aborted; nothing was recorded');
    expect(rec.stats.recorded).toBe(0);
    expect(counter.byTool.slow).toBe(1);
    await rec.close();
    await live.close();
  });

  it("a result over the entry size limit", async () => {
    const live = await inMemoryClient(newCounter());
    const rec = createRecorder({ store: "memory://", mode: "record", maxEntryBytes: 4096 });
    const wrapped = wrapMcpClient(live.client, {
      recorder: rec,
      server: "calculator",
      tools: { big: { readOnlyHint: true } },
    });
    const error = await wrapped.callTool({ name: "big", arguments: { kb: 8 } }).catch((e) => e);
    expect(error).toBeInstanceOf(ToolResultError);
    expect(error.message).toMatch(
      /tool "calculator\/big" returned \d+ bytes, over the 4096-byte entry limit/,
    );
    expect(rec.stats.recorded).toBe(0);
    let stored = 0;
    for await (const _ of rec.store.list("")) stored++;
    expect(stored).toBe(0);
    await rec.close();
    await live.close();
  });

  it("secrets in arguments never reach the cassette", async () => {
    const file = cassette();
    const live = await inMemoryClient(newCounter());
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    const answer = await wrapMcpClient(live.client, {
      recorder: rec,
      server: "calculator",
    }).getPrompt({
      name: "review",
      arguments: { lang: `ts ${key}` },
    });
    await rec.store.close();
    await live.close();
    expect(JSON.stringify(answer)).toContain(key); // the caller gets the live value
    const text = readFileSync(file, "utf8");
    expect(text).toContain("review");
    expect(text).not.toContain(key);
  });
});

describe("wrapMcpClient: the side-effect rule", () => {
  it("auto on a shared store: read-only tools hit, side-effecting tools always run live", async () => {
    const counter = newCounter();
    const live = await inMemoryClient(counter);
    const store = `sqlite://${join(dir, "shared.sqlite")}`;
    const rec = createRecorder({ store, mode: "auto" });
    const bypasses: string[] = [];
    rec.on("bypass", (e) => bypasses.push(e.reason));
    const client = wrapMcpClient(live.client, { recorder: rec, server: "calculator" });
    const first = await client.callTool({ name: "accumulate", arguments: { n: 1 } });
    const second = await client.callTool({ name: "accumulate", arguments: { n: 1 } });
    await client.callTool({ name: "add", arguments: { a: 1, b: 1 } });
    await client.callTool({ name: "add", arguments: { a: 1, b: 1 } });
    expect(counter.byTool.accumulate).toBe(2); // never served from the cache
    expect(counter.byTool.add).toBe(1); // read-only: the second is a hit
    expect(JSON.stringify(first)).toContain("total 1");
    expect(JSON.stringify(second)).toContain("total 2");
    expect(bypasses.some((r) => r.includes('tool "accumulate" may have side effects'))).toBe(true);
    await rec.close();

    // Opting the tool in per tool makes it cacheable.
    const optIn = createRecorder({ store, mode: "auto", namespace: "optin" });
    const c2 = wrapMcpClient(live.client, {
      recorder: optIn,
      server: "calculator",
      tools: { accumulate: { cacheSideEffects: true } },
    });
    await c2.callTool({ name: "accumulate", arguments: { n: 5 } });
    await c2.callTool({ name: "accumulate", arguments: { n: 5 } });
    expect(counter.byTool.accumulate).toBe(3);
    await optIn.close();
    await live.close();
  });

  it("auto on a cassette (a test run): every tool call records and replays", async () => {
    const counter = newCounter();
    const live = await inMemoryClient(counter);
    const rec = createRecorder({ store: cassetteStore(cassette()), mode: "auto" });
    const client = wrapMcpClient(live.client, { recorder: rec, server: "calculator" });
    await client.callTool({ name: "accumulate", arguments: { n: 1 } });
    const again = await client.callTool({ name: "accumulate", arguments: { n: 1 } });
    expect(counter.byTool.accumulate).toBe(1);
    expect(JSON.stringify(again)).toContain("total 1");
    await rec.store.close();
    await live.close();
  });
});

describe("one trajectory and mixed modes", () => {
  it("model and tool calls share a run: occurrences and the Merkle hash cover both", async () => {
    const file = cassette();
    const counter = newCounter();
    const live = await inMemoryClient(counter);
    const model = { role: "planner", prompt: "Add 1 twice", model: "m" };
    const step = async (
      rec: ReturnType<typeof createRecorder>,
      client: ReturnType<typeof wrapMcpClient>,
    ) =>
      rec.run(
        async (run) => {
          await rec.call(model, async () => ({ tool: "accumulate" }));
          const a = await client.callTool({ name: "accumulate", arguments: { n: 1 } });
          const b = await client.callTool({ name: "accumulate", arguments: { n: 1 } });
          await rec.call(model, async () => ({ done: true }));
          return {
            a,
            b,
            calls: run.calls.map((c) => `${c.id.slice(0, 8)}:${c.occurrence}`),
            hash: run.contentHash(),
          };
        },
        { runId: "agent-step" },
      );
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    const recorded = await step(
      rec,
      wrapMcpClient(live.client, { recorder: rec, server: "calculator" }),
    );
    await rec.store.close();
    await live.close();
    expect(JSON.stringify(recorded.a)).toContain("total 1");
    expect(JSON.stringify(recorded.b)).toContain("total 2");
    const toolId = toolIdentity(
      { kind: "tool", name: "accumulate", server: "calculator", args: { n: 1 } },
      { secrets: false },
    );
    // model, tools/list (the annotations lookup), the tool twice, model again.
    expect(recorded.calls.map((c) => c.split(":")[1])).toEqual(["0", "0", "0", "1", "1"]);
    expect(recorded.calls[2]).toBe(`${toolId.slice(0, 8)}:0`);
    expect(recorded.calls[3]).toBe(`${toolId.slice(0, 8)}:1`);

    const replayer = createRecorder({ store: cassetteStore(file), mode: "replay" });
    const replayed = await step(
      replayer,
      wrapMcpClient(newClient(), { recorder: replayer, server: "calculator" }),
    );
    expect(replayed).toEqual(JSON.parse(JSON.stringify(recorded)));
    expect(counter.byTool.accumulate).toBe(2);
    expect(replayed.hash).not.toBe(runContentHash([]));
    await replayer.store.close();
  });

  it("{ model: replay, tool: verify }: a tool answering differently is a ToolDivergenceError, field by field", async () => {
    const file = cassette();
    const first = await inMemoryClient(newCounter());
    const rec = createRecorder({ store: cassetteStore(file), mode: "record" });
    await rec.call({ role: "planner", prompt: "p" }, async () => ({ plan: 1 }));
    await wrapMcpClient(first.client, { recorder: rec, server: "calculator" }).callTool({
      name: "accumulate",
      arguments: { n: 2 },
    });
    await rec.store.close();

    // Same server state: verify passes and the tool really runs.
    const counter = newCounter();
    const second = await inMemoryClient(counter);
    const mixed = createRecorder({
      store: cassetteStore(file),
      mode: { model: "replay", tool: "verify" },
    });
    expect(mixed.modes).toEqual({ model: "replay", tool: "verify" });
    const client = wrapMcpClient(second.client, { recorder: mixed, server: "calculator" });
    expect(await mixed.call({ role: "planner", prompt: "p" }, async () => ({ plan: 2 }))).toEqual({
      plan: 1,
    });
    await client.callTool({ name: "accumulate", arguments: { n: 2 } });
    expect(counter.byTool.accumulate).toBe(1);
    // Now the server's state differs from the recording.
    const events: unknown[] = [];
    mixed.on("divergence", (e) => events.push(e));
    const error = await client
      .callTool({ name: "accumulate", arguments: { n: 2 } })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ToolDivergenceError);
    expect(error.message).toContain('tool "accumulate"');
    expect(error.message).toContain('$.content[0].text: "total 2" → "total 4"');
    expect(events).toHaveLength(1);
    await mixed.store.close();
    await first.close();
    await second.close();
  });
});
