/**
 * The real `ai` package: generateText with a tool, the model behind
 * invocacheMiddleware and the tool behind recordAiSdkTools. The replay runs
 * with a model that fails every call and a tool that is never executed.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, expect, it } from "vitest";
import { invocacheMiddleware } from "../../src/adapters/index.js";
import { cassetteStore } from "../../src/cassette/store.js";
import { createRecorder, type Recorder, recordAiSdkTools } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-aitool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 },
};

function scripted(): { model: MockLanguageModelV3; calls: () => number } {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      calls++;
      if (calls === 1) {
        return {
          content: [
            {
              type: "tool-call",
              toolCallId: "call_1",
              toolName: "weather",
              input: '{"city":"Oslo"}',
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: "text", text: "It is sunny in Oslo." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    },
  });
  return { model, calls: () => calls };
}

function down(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => {
      throw new Error("the provider is stopped");
    },
  });
}

async function agent(recorder: Recorder, model: MockLanguageModelV3, executions: { n: number }) {
  const tools = recordAiSdkTools(
    {
      weather: tool({
        description: "Weather for a city",
        inputSchema: jsonSchema<{ city: string }>({
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        }),
        execute: async ({ city }) => {
          executions.n++;
          return { city, sky: "sunny", reading: executions.n };
        },
      }),
    },
    { recorder, effects: { weather: { readOnlyHint: true } } },
  );
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: invocacheMiddleware({ recorder }) }),
    prompt: "Weather in Oslo?",
    tools,
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
  return {
    text: result.text,
    toolResults: result.steps.flatMap((s) => s.toolResults.map((r) => r.output)),
  };
}

it("records model calls and tool executions, replays both with everything stopped", async () => {
  const path = join(dir, "agent.yaml");
  const executions = { n: 0 };
  const live = scripted();
  const rec = createRecorder({ store: cassetteStore(path), mode: "record" });
  const recorded = await agent(rec, live.model, executions);
  await rec.store.close();
  expect(recorded.text).toBe("It is sunny in Oslo.");
  expect(recorded.toolResults).toEqual([{ city: "Oslo", sky: "sunny", reading: 1 }]);
  expect(live.calls()).toBe(2);
  expect(executions.n).toBe(1);

  const replay = createRecorder({ store: cassetteStore(path), mode: "replay" });
  const replayed = await agent(replay, down(), executions);
  expect(replayed).toEqual(recorded);
  expect(executions.n).toBe(1); // zero tool executions on replay
  expect(replay.stats.hits).toBe(3); // two model calls and one tool call
  await replay.store.close();
});
