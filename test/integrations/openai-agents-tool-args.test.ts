/**
 * Issue 29, item 1, through the real `@openai/agents` package: invocacheTool
 * hashes `{ input }`, and that input is data. The arguments recipe tool v1
 * merged (UUIDs, 13-digit ids, dates, whitespace) are distinct calls; a path
 * under the project root is the same call on two machines.
 */
import { RunContext } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { createRecorder, type Recorder, withInvocation } from "../../src/index.js";
import { invocacheTool } from "../../src/integrations/openai-agents.js";
import { type Args, distinctArgs, MACHINES } from "../tools/arg-cases.js";

function lookup(recorder: Recorder, executions: { n: number }) {
  return invocacheTool(
    {
      name: "get_order",
      description: "Look an order up",
      // A plain JSON schema, non-strict: every key optional, as the cases need.
      parameters: {
        type: "object" as const,
        properties: {
          id: { type: "string" },
          since: { type: "string" },
          pattern: { type: "string" },
          path: { type: "string" },
        },
        required: [] as string[],
        additionalProperties: true,
      },
      strict: false,
      errorFunction: null,
      execute: async (input) => {
        executions.n++;
        return JSON.stringify(input);
      },
    },
    { recorder, readOnlyHint: true },
  );
}

const call = async (t: ReturnType<typeof lookup>, args: Args) =>
  JSON.parse(String(await t.invoke(new RunContext(), JSON.stringify(args))));

describe("invocacheTool (real @openai/agents): arguments are data (recipe tool v2)", () => {
  it("UUIDs, 13-digit ids, dates and whitespace variants are all distinct calls", async () => {
    const recorder = createRecorder({ store: "memory://", mode: "auto" });
    const executions = { n: 0 };
    const t = lookup(recorder, executions);
    const all = distinctArgs();
    for (const args of all) expect(await call(t, args)).toEqual(args);
    for (const args of all) expect(await call(t, args)).toEqual(args);
    expect(executions.n).toBe(all.length);
    await recorder.close();
  });

  it("a path under the project root is the same call on two machines", async () => {
    const recorder = createRecorder({ store: "memory://", mode: "auto" });
    const executions = { n: 0 };
    const t = lookup(recorder, executions);
    const [a, b] = MACHINES;
    expect(await withInvocation({ projectPath: a.projectPath }, () => call(t, a.args))).toEqual(
      a.args,
    );
    expect(await withInvocation({ projectPath: b.projectPath }, () => call(t, b.args))).toEqual(
      a.args,
    );
    expect(executions.n).toBe(1);
    await recorder.close();
  });
});
