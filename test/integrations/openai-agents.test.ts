/**
 * The OpenAI Agents SDK (`@openai/agents`, real package) through invocache:
 * an agent with a handoff to an agent with a tool, over the Responses API,
 * multi-turn. The first run records, the second replays with the provider
 * stopped; tracing and the SDK's retries do not change identities.
 */
import {
  Agent,
  BatchTraceProcessor,
  getGlobalTraceProvider,
  OpenAITracingExporter,
  RunContext,
  Runner,
  setTraceProcessors,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import OpenAI from "openai";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Recorder, ReplayMissError, withInvocation } from "../../src/index.js";
import {
  invocacheClient,
  invocacheModelProvider,
  invocacheTool,
} from "../../src/integrations/openai-agents.js";
import { runKey } from "../../src/store/index.js";
import { sqliteSandbox } from "../adapters/helpers.js";
import { type ScriptedResponses, startScriptedResponses } from "./scripted-responses.js";

let provider: ScriptedResponses;
let box: Awaited<ReturnType<typeof sqliteSandbox>>;
let toolRuns = 0;

beforeEach(async () => {
  setTracingDisabled(true); // never export traces anywhere but the loopback sink below
  provider = await startScriptedResponses();
  box = await sqliteSandbox();
  toolRuns = 0;
});
afterEach(async () => {
  await provider.close();
  await box.cleanup();
});
afterAll(() => setTracingDisabled(true));

const lookupOrder = tool({
  name: "lookup_order",
  description: "Look an order up by id",
  parameters: z.object({ order: z.string() }),
  execute: async ({ order }) => {
    toolRuns++;
    return `order ${order} shipped`;
  },
});

function agents(tools = [lookupOrder]) {
  const billing = new Agent({
    name: "Billing agent",
    instructions: "Answer billing questions; look orders up.",
    model: "gpt-5",
    tools,
  });
  return new Agent({
    name: "Triage agent",
    instructions: "Hand billing questions to the billing agent.",
    model: "gpt-5",
    handoffs: [billing],
  });
}

function runner(recorder: Recorder, maxRetries = 0): Runner {
  const client = new OpenAI({
    apiKey: "sk-agents-test",
    baseURL: `${provider.url}/v1`,
    maxRetries,
  });
  return new Runner({ modelProvider: invocacheModelProvider({ recorder, client }) });
}

async function ask(recorder: Recorder, r = runner(recorder), triage = agents()) {
  const result = await withInvocation({ role: "support", task: "order 42" }, () =>
    recorder.run(() => r.run(triage, "Where is my order 42?"), { runId: "support-42" }),
  );
  return { output: result.finalOutput, agent: result.lastAgent?.name };
}

describe("OpenAI Agents SDK through createFetch", () => {
  it("records a handoff and a tool round, then replays them with the provider stopped", async () => {
    const first = await ask(box.recorder("auto"));
    expect(first).toStrictEqual({ output: "reply #3: order 42 shipped", agent: "Billing agent" });
    expect(provider.calls).toBe(3); // triage → handoff, billing → tool call, billing → answer
    await provider.close();
    const replayer = box.recorder("replay");
    expect(await ask(replayer)).toStrictEqual(first);
    expect(provider.calls).toBe(3);
    expect(replayer.stats.hits).toBe(3);
    // Tool executions are not recorded here (that is the tool wrappers' job): the tool ran again.
    expect(toolRuns).toBe(2);
  });

  it("a changed instruction is a miss that names the field", async () => {
    await ask(box.recorder("auto"));
    const replayer = box.recorder("replay");
    const triage = agents();
    triage.instructions = "Hand every question to the billing agent.";
    const miss = await withInvocation({ role: "support", task: "order 42" }, () =>
      runner(replayer).run(triage, "Where is my order 42?"),
    ).catch((e: unknown) => e);
    // Answered as a 404 carrying the miss report: the OpenAI client's own error shows it.
    expect(miss).toBeInstanceOf(OpenAI.NotFoundError);
    const message = (miss as Error).message;
    expect(message).toMatch(/Nearest 1: \w+ \(recorded [^)]*\) differs in:\n\s+- prompt:/);
    expect(message).toContain("[-billing-]{+every+}");
  });

  it("the SDK's retries and tracing do not change identities", async () => {
    provider.rateLimit(1); // the first model call is retried by the client
    const recorder = box.recorder("auto");
    const first = await ask(recorder, runner(recorder, 2));
    expect(provider.calls).toBe(3);
    expect(recorder.stats.recorded).toBe(3);
    const sink = await startScriptedResponses(); // trace uploads go here, on loopback
    try {
      setTracingDisabled(false);
      setTraceProcessors([
        new BatchTraceProcessor(
          new OpenAITracingExporter({
            apiKey: "sk-trace",
            endpoint: `${sink.url}/v1/traces/ingest`,
          }),
          { scheduleDelay: 1 },
        ),
      ]);
      await provider.close();
      const replayer = box.recorder("replay");
      expect(await ask(replayer)).toStrictEqual(first);
      expect(replayer.stats.hits).toBe(3);
      await getGlobalTraceProvider().forceFlush();
      expect(sink.traces).toBeGreaterThan(0); // the control: tracing was on
      expect(sink.calls).toBe(0);
    } finally {
      setTracingDisabled(true);
      await sink.close();
    }
  });

  it("a second user turn on the history replays too (multi-turn)", async () => {
    const conversation = async (recorder: Recorder) => {
      const r = runner(recorder);
      return recorder.run(
        async () => {
          const first = await r.run(agents(), "Where is my order 42?");
          const second = await r.run(first.lastAgent ?? agents(), [
            ...first.history,
            { role: "user", content: "And order 42 again?" },
          ]);
          return [first.finalOutput, second.finalOutput];
        },
        { runId: "support-42-two-turns" },
      );
    };
    const first = await conversation(box.recorder("auto"));
    expect(provider.calls).toBe(4); // the second turn starts at the billing agent, tool already answered
    await provider.close();
    const replayer = box.recorder("replay");
    expect(await conversation(replayer)).toStrictEqual(first);
    expect(replayer.stats.hits).toBe(4);
  });

  it("tool executions replay through invocacheTool: the replay runs no tool and calls no provider", async () => {
    const recordedLookup = (recorder: Recorder, policy: { readOnlyHint?: boolean } = {}) =>
      invocacheTool(
        {
          name: "lookup_order",
          description: "Look an order up by id",
          parameters: z.object({ order: z.string() }),
          execute: async ({ order }) => {
            toolRuns++;
            return `order ${order} shipped`;
          },
        },
        { recorder, ...policy },
      );
    const recorder = box.recorder("auto");
    const first = await ask(
      recorder,
      runner(recorder),
      agents([recordedLookup(recorder, { readOnlyHint: true })]),
    );
    expect(first).toStrictEqual({ output: "reply #3: order 42 shipped", agent: "Billing agent" });
    expect(provider.calls).toBe(3);
    expect(toolRuns).toBe(1);
    expect(recorder.stats.recorded).toBe(4); // three model calls and the tool execution
    const stored = (await recorder.store.get(runKey(recorder.namespace, "support-42"))) as {
      calls: string[];
    };
    expect(stored.calls).toHaveLength(4); // one trajectory: model → model → tool → model
    await provider.close();
    const replayer = box.recorder("replay");
    const second = await ask(replayer, runner(replayer), agents([recordedLookup(replayer)]));
    expect(second).toStrictEqual(first);
    expect(provider.calls).toBe(3);
    expect(toolRuns).toBe(1); // the tool's real function did not run again
    expect(replayer.stats.hits).toBe(4);
  });

  it("invocacheTool keeps the side-effect rule: a tool without hints runs live in auto mode", async () => {
    const recorder = box.recorder("auto");
    const bypassed: string[] = [];
    recorder.on("bypass", (e: { reason: string }) => bypassed.push(e.reason));
    const writes = invocacheTool(
      {
        name: "lookup_order",
        description: "Look an order up by id",
        parameters: z.object({ order: z.string() }),
        execute: async ({ order }) => {
          toolRuns++;
          return `order ${order} shipped`;
        },
      },
      { recorder },
    );
    await ask(recorder, runner(recorder), agents([writes]));
    await ask(recorder, runner(recorder), agents([writes]));
    expect(toolRuns).toBe(2);
    expect(bypassed.join("\n")).toContain("lookup_order");
  });

  it("a tool input the recording does not have is a miss that names the field", async () => {
    const recorder = box.recorder("auto");
    const lookup = invocacheTool(
      {
        name: "lookup_order",
        description: "Look an order up by id",
        parameters: z.object({ order: z.string() }),
        execute: async ({ order }) => `order ${order} shipped`,
      },
      { recorder, readOnlyHint: true },
    );
    await withInvocation({ role: "support" }, () =>
      lookup.invoke(new RunContext(), JSON.stringify({ order: "42" })),
    );
    const replayer = box.recorder("replay");
    const replayed = invocacheTool(
      {
        name: "lookup_order",
        description: "Look an order up by id",
        parameters: z.object({ order: z.string() }),
        errorFunction: null, // let the miss through instead of the SDK's error text
        execute: async ({ order }) => `order ${order} shipped`,
      },
      { recorder: replayer },
    );
    const miss = await withInvocation({ role: "support" }, () =>
      replayed.invoke(new RunContext(), JSON.stringify({ order: "43" })),
    ).catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect((miss as ReplayMissError).message).toContain('$.args.input.order: "42" → "43"');
  });

  it("invocacheTool refuses options without execute, or no recorder", () => {
    expect(() => invocacheTool({ name: "x" } as never, { recorder: box.recorder("auto") })).toThrow(
      /with an execute function/,
    );
    expect(() =>
      invocacheTool(
        { name: "x", description: "x", parameters: z.object({}), execute: async () => "x" },
        {} as never,
      ),
    ).toThrow(/recorder/);
  });

  it("invocacheClient refuses something that is not an OpenAI client", () => {
    expect(() => invocacheClient({ recorder: box.recorder("auto"), client: {} as never })).toThrow(
      /options.client must be an OpenAI client/,
    );
  });
});
