/**
 * `invocache stats` counts what the recordings cost: tokens and dollars by
 * namespace, role and model, with the price table's snapshot, from a store
 * and from a cassette; an unknown model shows its tokens, "price unknown".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatsReport } from "../../src/cli/commands/stats.js";
import { createRecorder } from "../../src/index.js";
import { defaultStoreUrl } from "../../src/store/index.js";
import { costOf } from "../../src/usage/cost.js";
import { BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

const cwd = mkdtempSync(join(tmpdir(), "invocache-cli-stats-usage-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const completion = (model: string, input: number, output: number) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
});

beforeAll(async () => {
  await buildCli();
  const r = createRecorder({
    store: defaultStoreUrl(cwd),
    mode: "record",
    env: {},
    telemetry: false,
  });
  await r.call({ role: "planner", model: "gpt-4o-mini", prompt: "a" }, async () =>
    completion("gpt-4o-mini", 2000, 500),
  );
  await r.call({ role: "builder", model: "gpt-4o-mini", prompt: "b" }, async () =>
    completion("gpt-4o-mini", 1000, 1000),
  );
  await r.call({ role: "builder", model: "sim-1", prompt: "c" }, async () =>
    completion("sim-1", 30, 7),
  );
  await r.call({ role: "tool", prompt: "d" }, async () => ({ answer: 1 }));
  await r.close();
}, BUILD_TIMEOUT);

describe("invocache stats: tokens and cost", () => {
  it("--json has the recorded tokens, dollars and price snapshot, by role and model", () => {
    const r = cli(["stats", "--json"], { cwd });
    expect(r.status).toBe(0);
    const out = r.json<StatsReport>();
    const usd =
      costOf("gpt-4o-mini", { shape: "openai.chat", inputTokens: 2000, outputTokens: 500 })!.usd +
      costOf("gpt-4o-mini", { shape: "openai.chat", inputTokens: 1000, outputTokens: 1000 })!.usd;
    expect(out.recorded).toMatchObject({
      inputTokens: 3030,
      outputTokens: 1507,
      unpriced: 1,
      noUsage: 1,
    });
    expect(out.recorded.usd).toBeCloseTo(usd, 9);
    expect(out.byModel["gpt-4o-mini"]?.recorded.usd).toBeCloseTo(usd, 9);
    expect(out.byModel["sim-1"]?.recorded).toMatchObject({ inputTokens: 30, usd: 0, unpriced: 1 });
    expect(out.byRole.builder?.recorded.inputTokens).toBe(1030);
    expect(out.prices).toMatchObject({ source: "@pydantic/genai-prices" });
    expect(out.prices.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("prints the cost and the price table's date", () => {
    const r = cli(["stats"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /recorded cost\s+4\.54k tokens \(\$0\.00\d+ \+ 1 unpriced\), 1 entry without usage · prices @pydantic\/genai-prices@[\d.]+ \(\d{4}-\d{2}-\d{2}\)/,
    );
    expect(r.stdout).toMatch(/sim-1\s+1\s.*37 tokens \(price unknown\)/);
  });
});
