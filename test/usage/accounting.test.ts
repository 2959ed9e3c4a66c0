/**
 * Savings accounting in recorder.stats and the run event: single-flight
 * followers are hits that saved the leader's tokens; groups by run, role,
 * model and namespace; an unknown model counts tokens with "price unknown".
 */
import { describe, expect, it } from "vitest";
import { createRecorder, type RecorderEvents } from "../../src/index.js";
import { costOf } from "../../src/usage/cost.js";
import { formatSpend } from "../../src/usage/summary.js";

const completion = (model: string, input: number, output: number) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
});

function recorder(namespace = "default") {
  return createRecorder({ store: "memory://", mode: "auto", env: {}, namespace, telemetry: false });
}

describe("savings accounting", () => {
  it("100 concurrent identical calls: 1 miss, 1 upstream call, 99 hits that saved 99× the tokens", async () => {
    const r = recorder();
    let upstream = 0;
    const one = usageCost();
    await Promise.all(
      Array.from({ length: 100 }, () =>
        r.call({ role: "planner", model: "gpt-4o-mini", prompt: "plan" }, async () => {
          upstream++;
          await new Promise((res) => setTimeout(res, 20));
          return completion("gpt-4o-mini", 1000, 200);
        }),
      ),
    );
    expect(upstream).toBe(1);
    const s = r.stats;
    expect({
      calls: s.calls,
      hits: s.hits,
      misses: s.misses,
      upstream: s.upstreamCalls,
    }).toStrictEqual({ calls: 100, hits: 99, misses: 1, upstream: 1 });
    expect(s.spent).toMatchObject({ inputTokens: 1000, outputTokens: 200, unpriced: 0 });
    expect(s.saved).toMatchObject({ inputTokens: 99_000, outputTokens: 19_800 });
    expect(s.spent.usd).toBeCloseTo(one, 9);
    expect(s.saved.usd).toBeCloseTo(99 * one, 9);
    expect(s.saved.ms).toBeGreaterThan(0);
    expect(s.byRole.planner?.hits).toBe(99);
    expect(s.byModel["gpt-4o-mini"]?.upstreamCalls).toBe(1);
    expect(s.byNamespace.default?.calls).toBe(100);
    expect(s.prices.source).toBe("@pydantic/genai-prices");
    await r.close();
  });

  it("by run (nested runs count in each), and the run event carries the run's summary", async () => {
    const r = recorder("ns1");
    const runs: RecorderEvents["run"][] = [];
    r.on("run", (e) => runs.push(e));
    const call = (role: string, prompt: string) =>
      r.call({ role, model: "gpt-4o-mini", prompt }, async () =>
        completion("gpt-4o-mini", 100, 10),
      );
    await r.run(
      async () => {
        await call("planner", "a");
        await r.run(async () => call("builder", "b"), { runId: "inner" });
      },
      { runId: "outer" },
    );
    await r.run(
      async () => {
        await call("planner", "a");
        await r.run(async () => call("builder", "b"), { runId: "inner" });
      },
      { runId: "outer" },
    );
    const s = r.stats;
    expect(s.byRun.outer).toMatchObject({ calls: 4, hits: 2, upstreamCalls: 2 });
    expect(s.byRun.inner).toMatchObject({ calls: 2, hits: 1, upstreamCalls: 1 });
    expect(s.byRole.builder).toMatchObject({ calls: 2, hits: 1 });
    expect(s.byNamespace.ns1?.calls).toBe(4);
    const lastOuter = runs.filter((e) => e.runId === "outer").at(-1)!;
    expect(lastOuter.summary).toMatchObject({ calls: 4, hits: 2 });
    expect(lastOuter.summary.saved.inputTokens).toBe(200);
    await r.close();
  });

  it("an unknown model: tokens counted, dollars not ('price unknown')", async () => {
    const r = recorder();
    const req = { role: "x", model: "sim-1", prompt: "p" };
    await r.call(req, async () => completion("sim-1", 40, 2));
    await r.call(req, async () => completion("sim-1", 40, 2));
    expect(r.stats.saved).toMatchObject({ inputTokens: 40, outputTokens: 2, usd: 0, unpriced: 1 });
    expect(formatSpend(r.stats.saved)).toBe("42 tokens (price unknown)");
    await r.close();
  });

  it("a response with no known usage shape counts as noUsage, never as zero tokens priced", async () => {
    const r = recorder();
    await r.call({ role: "x", prompt: "p" }, async () => ({ answer: 42 }));
    expect(r.stats.spent).toMatchObject({ noUsage: 1, inputTokens: 0, unpriced: 0, usd: 0 });
    expect(formatSpend(r.stats.spent)).toBe("no usage reported");
    await r.close();
  });

  it("the call event says what happened", async () => {
    const r = recorder();
    const calls: RecorderEvents["call"][] = [];
    r.on("call", (e) => calls.push(e));
    const req = { role: "x", model: "gpt-4o-mini", prompt: "p" };
    await r.call(req, async () => completion("gpt-4o-mini", 10, 1));
    await r.call(req, async () => completion("gpt-4o-mini", 10, 1));
    await expect(
      r.call({ ...req, prompt: "q" }, async () => Promise.reject(new Error("boom"))),
    ).rejects.toThrow("boom");
    expect(calls.map((c) => [c.outcome, c.missed, c.upstream, c.shared])).toStrictEqual([
      ["recorded", true, true, false],
      ["hit", false, false, false],
      ["error", true, true, false],
    ]);
    expect(calls[1]?.usage).toMatchObject({
      inputTokens: 10,
      outputTokens: 1,
      model: "gpt-4o-mini",
    });
    expect(calls[1]?.cost?.snapshot.date).toMatch(/^\d{4}-/);
    expect(r.stats.upstreamCalls).toBe(2);
    expect(r.stats.spent.inputTokens).toBe(10); // the failed call spent nothing it reported
    await r.close();
  });
});

function usageCost(): number {
  return costOf("gpt-4o-mini", { shape: "openai.chat", inputTokens: 1000, outputTokens: 200 })!.usd;
}

describe("byRun stays bounded", () => {
  it("keeps the most recent MAX_RUNS_KEPT runs", async () => {
    const { MAX_RUNS_KEPT } = await import("../../src/usage/summary.js");
    const r = recorder();
    for (let i = 0; i < MAX_RUNS_KEPT + 5; i++) {
      await r.run(async () => r.call({ role: "x", prompt: `p${i}` }, async () => ({ i })), {
        runId: `run-${i}`,
      });
    }
    expect(Object.keys(r.stats.byRun)).toHaveLength(MAX_RUNS_KEPT);
    expect(r.stats.byRun["run-0"]).toBeUndefined();
    expect(r.stats.byRun[`run-${MAX_RUNS_KEPT + 4}`]?.calls).toBe(1);
    expect(r.stats.calls).toBe(MAX_RUNS_KEPT + 5);
    await r.close();
  });
});
