/**
 * The OpenAI Agents SDK through invocache: a triage agent hands off to a
 * billing agent, which calls a tool and answers (three Responses API calls).
 * `invocacheModelProvider` gives the runner an OpenAI client whose fetch is
 * invocache's; `invocacheTool` is the SDK's `tool()` with its execution
 * recorded, so the replay runs no tool either. Runs against a local scripted
 * Responses server.
 * Run: npx tsx examples/openai-agents.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, Runner, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { createRecorder, type Mode, type Recorder, withInvocation } from "../src/index.js";
import { invocacheModelProvider, invocacheTool } from "../src/integrations/openai-agents.js";
import { startScriptedResponses } from "../test/integrations/scripted-responses.js";

setTracingDisabled(true); // this example exports no traces
const provider = await startScriptedResponses();
const dir = await mkdtemp(join(tmpdir(), "invocache-agents-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;

let toolRuns = 0;
function agents(recorder: Recorder) {
  const lookupOrder = invocacheTool(
    {
      name: "lookup_order",
      description: "Look an order up by id",
      parameters: z.object({ order: z.string() }),
      execute: async ({ order }) => {
        toolRuns++;
        return `order ${order} shipped`;
      },
    },
    { recorder, readOnlyHint: true }, // read-only: may be served from the cache in auto mode
  );
  const billing = new Agent({
    name: "Billing agent",
    instructions: "Answer billing questions; look orders up.",
    model: "gpt-5",
    tools: [lookupOrder],
  });
  return new Agent({
    name: "Triage agent",
    instructions: "Hand billing questions to the billing agent.",
    model: "gpt-5",
    handoffs: [billing],
  });
}

async function pipeline(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const client = new OpenAI({
    apiKey: "sk-example-key",
    baseURL: `${provider.url}/v1`,
    maxRetries: 0,
  });
  const runner = new Runner({ modelProvider: invocacheModelProvider({ recorder, client }) });
  const result = await withInvocation({ role: "support" }, () =>
    recorder.run(() => runner.run(agents(recorder), "Where is my order 42?"), {
      runId: "support-42",
    }),
  );
  const stats = { ...recorder.stats };
  await recorder.close();
  return { out: String(result.finalOutput), stats };
}

try {
  const first = await pipeline("auto");
  assert.equal(toolRuns, 1);
  await provider.close(); // the replay must not need it
  const second = await pipeline("replay");
  assert.equal(second.out, first.out);
  assert.equal(provider.calls, 3);
  assert.equal(second.stats.hits, 4); // three model calls and the tool execution
  assert.equal(toolRuns, 1);
  console.log("recorded:", first.out);
  console.log(
    `replayed: identical, ${second.stats.hits} hits, 0 upstream calls, 0 tool executions`,
  );
} finally {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
}
