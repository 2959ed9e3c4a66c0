/**
 * An agent step with tools: the AI SDK's generateText loop calls a local MCP
 * server (over stdio, via the official SDK client) and a plain function tool.
 * The first run records the model calls and the tool calls; the second run
 * replays all of them with the model provider AND the MCP server stopped, and
 * counts zero tool executions. No key or network needed.
 * Run: npx tsx examples/agent-tools.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { invocacheMiddleware, withInvocation } from "../src/adapters/index.js";
import { createRecorder, type Mode, wrapTool } from "../src/index.js";
import { wrapMcpClient } from "../src/tools/mcp.js";

const SERVER = fileURLToPath(new URL("../test/tools/fixtures/mcp-server.ts", import.meta.url));
const dir = await mkdtemp(join(tmpdir(), "invocache-agent-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;
const counterFile = join(dir, "mcp-executions");

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** The "provider": scripted when up, failing every call when stopped. */
function provider(up: boolean) {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      if (!up) throw new Error("the model provider is stopped");
      calls++;
      if (calls === 1) {
        return {
          content: [
            {
              type: "tool-call" as const,
              toolCallId: "c1",
              toolName: "add",
              input: '{"a":2,"b":3}',
            },
            {
              type: "tool-call" as const,
              toolCallId: "c2",
              toolName: "unit",
              input: '{"code":"EUR"}',
            },
          ],
          finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: "text" as const, text: "The total is 5 euros." }],
        finishReason: { unified: "stop" as const, raw: "stop" },
        usage,
        warnings: [],
      };
    },
  });
  return { model, calls: () => calls };
}

async function agentStep(mode: Mode) {
  const recorder = createRecorder({ store, mode, env: {} });
  const live = mode !== "replay";
  // Only a live run starts the MCP server; a replay never connects.
  const transport = live
    ? new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", SERVER, "stdio"],
        env: { ...(process.env as Record<string, string>), MCP_COUNTER_FILE: counterFile },
      })
    : undefined;
  const mcp = wrapMcpClient(new Client({ name: "agent", version: "1.0.0" }), {
    recorder,
    server: "calculator",
  });
  if (transport) await mcp.connect(transport);

  let functionExecutions = 0;
  const unitName = wrapTool(
    async ({ code }: { code: string }) => {
      functionExecutions++;
      return { code, name: code === "EUR" ? "euro" : "unknown" };
    },
    { name: "unit_name", recorder, readOnlyHint: true },
  );
  const tools = {
    add: tool({
      description: "Add two numbers on the calculator MCP server",
      inputSchema: jsonSchema<{ a: number; b: number }>({
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      }),
      execute: async (args) => mcp.callTool({ name: "add", arguments: args }),
    }),
    unit: tool({
      description: "The name of a currency",
      inputSchema: jsonSchema<{ code: string }>({
        type: "object",
        properties: { code: { type: "string" } },
        required: ["code"],
      }),
      execute: (args) => unitName(args),
    }),
  };
  const p = provider(live);
  const mcpBefore = await executions();
  const result = await recorder.run(
    () =>
      withInvocation({ role: "accountant", task: "total the invoice" }, () =>
        generateText({
          model: wrapLanguageModel({
            model: p.model,
            middleware: invocacheMiddleware({ recorder }),
          }),
          prompt: "What is 2 + 3, and in which currency?",
          tools,
          stopWhen: stepCountIs(3),
          maxRetries: 0,
        }),
      ),
    { runId: "invoice-step" },
  );
  if (transport) await mcp.close();
  const toolExecutions = (await executions()) - mcpBefore + functionExecutions;
  console.log(
    `[${mode}] answer: ${result.text} | model calls: ${p.calls()} | tool executions: ${toolExecutions} | hits: ${recorder.stats.hits}`,
  );
  await recorder.close();
  return { text: result.text, toolExecutions, modelCalls: p.calls() };
}

async function executions(): Promise<number> {
  const text = await readFile(counterFile, "utf8").catch(() => "");
  return text.split("\n").filter(Boolean).length;
}

try {
  const first = await agentStep("auto");
  assert.equal(first.toolExecutions, 2);
  const second = await agentStep("replay");
  assert.equal(second.text, first.text);
  assert.equal(second.toolExecutions, 0);
  assert.equal(second.modelCalls, 0);
  console.log("replayed the whole agent step: 0 model calls, 0 tool executions");
} finally {
  await rm(dir, { recursive: true, force: true });
}
