/**
 * Issue 29, item 1: tool arguments are data. Each front (wrapTool, the real
 * `ai` package's tool through recordAiSdkTools, MCP callTool against a real
 * SDK server over stdio) must tell apart the arguments recipe tool v1 merged
 * (UUIDs, 13-digit ids, dates, whitespace), and still treat a path under the
 * project root as the same argument on two machines.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { jsonSchema, tool } from "ai";
import { afterAll, describe, expect, it } from "vitest";
import { createRecorder, type Recorder, recordAiSdkTools, wrapTool } from "../../src/index.js";
import { withInvocation } from "../../src/invocation/index.js";
import { wrapMcpClient } from "../../src/tools/mcp-client.js";
import { type Args, distinctArgs, MACHINES } from "./arg-cases.js";
import { countLines } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-toolargs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FS_SERVER = fileURLToPath(new URL("./fixtures/fs-server.ts", import.meta.url));

/** A front: a function that calls the tool with `args` and returns what the tool saw. */
type Front = (rec: Recorder) => Promise<{
  call: (args: Args) => Promise<unknown>;
  executions: () => number;
  close: () => Promise<void>;
}>;

/** Every distinct argument reaches the tool once, and each answer is its own. */
async function expectDistinct(front: Front) {
  const rec = createRecorder({ store: "memory://", mode: "auto" });
  const t = await front(rec);
  const all = distinctArgs();
  for (const args of all) expect(await t.call(args)).toEqual(args);
  // Asked again, each is a hit: the cache works, it just no longer merges data.
  for (const args of all) expect(await t.call(args)).toEqual(args);
  expect(t.executions()).toBe(all.length);
  await t.close();
  await rec.close();
}

/** The same file on two machines is one identity: the second machine hits. */
async function expectSameAcrossMachines(front: Front) {
  const rec = createRecorder({ store: "memory://", mode: "auto" });
  const t = await front(rec);
  const [a, b] = MACHINES;
  expect(await withInvocation({ projectPath: a.projectPath }, () => t.call(a.args))).toEqual(
    a.args,
  );
  // The recorded answer is the first machine's: the second never runs the tool.
  expect(await withInvocation({ projectPath: b.projectPath }, () => t.call(b.args))).toEqual(
    a.args,
  );
  expect(t.executions()).toBe(1);
  await t.close();
  await rec.close();
}

const wrapToolFront: Front = async (recorder) => {
  let n = 0;
  const getOrder = wrapTool(
    async (args: Args) => {
      n++;
      return args;
    },
    { name: "get_order", recorder, readOnlyHint: true },
  );
  return { call: (args) => getOrder(args), executions: () => n, close: async () => {} };
};

const aiSdkFront: Front = async (recorder) => {
  let n = 0;
  const tools = recordAiSdkTools(
    {
      grep: tool({
        description: "Search",
        inputSchema: jsonSchema<Args>({ type: "object" }),
        execute: async (args: Args) => {
          n++;
          return args;
        },
      }),
    },
    { recorder, effects: { grep: { readOnlyHint: true } } },
  );
  const execute = tools.grep.execute as (a: Args, o: object) => Promise<unknown>;
  return {
    call: (args) => execute(args, { toolCallId: `call_${n}`, messages: [] }),
    executions: () => n,
    close: async () => {},
  };
};

let servers = 0;
const mcpFront: Front = async (recorder) => {
  const counter = join(dir, `mcp-${++servers}.log`);
  const client = new Client({ name: "invocache-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", FS_SERVER, dir],
      env: { ...(process.env as Record<string, string>), MCP_COUNTER_FILE: counter },
      stderr: "pipe",
    }),
  );
  const wrapped = wrapMcpClient(client, { recorder, server: "fs" });
  return {
    call: async (args) => {
      const out = (await wrapped.callTool({ name: "echo", arguments: args })) as {
        content: Array<{ text: string }>;
      };
      return JSON.parse(out.content[0]?.text ?? "null");
    },
    executions: () => countLines(counter),
    close: () => client.close(),
  };
};

describe.each([
  ["wrapTool", wrapToolFront],
  ["AI SDK tool (recordAiSdkTools)", aiSdkFront],
  ["MCP callTool over stdio", mcpFront],
])("%s: arguments are data (recipe tool v2)", (_name, front) => {
  it("UUIDs, 13-digit ids, dates and whitespace variants are all distinct calls", async () => {
    await expectDistinct(front);
  });
  it("a path under the project root is the same call on two machines", async () => {
    await expectSameAcrossMachines(front);
  });
});
