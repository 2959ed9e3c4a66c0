/**
 * `npm run bench -- --json agent-loop` end to end at a toy size (2- and
 * 3-turn loops, one measured round, the memory store), in a child process.
 * Timings are not asserted (a few loops on a shared machine say nothing);
 * what is: each length's identity and replay rows are there, and each
 * replay row's ceiling (its note: "at most X× with this run's identity …,
 * Y× with the identity at its target") is the arithmetic of this run's own
 * figures, floor / (floor + identity), so the bound the table prints is the
 * one docs/performance.md argues from.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type NodeRun, runNode } from "../helpers/run-node.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

interface Row {
  measurement: string;
  invocache: number;
  baseline: number;
  note?: string;
}

function runBench(): Promise<NodeRun> {
  return runNode(["--import", "tsx", "bench/run.ts", "--json", "agent-loop"], root, {
    ...process.env,
    BENCH_AGENT_TURNS: "2,3",
    BENCH_AGENT_ROUNDS: "1",
    BENCH_AGENT_PARTS: "identity,replay",
    BENCH_AGENT_STORES: "memory",
    INVOCACHE_MODE: "passthrough",
  });
}

describe("the agent-loop bench at a toy size", () => {
  it("prints each replay row's ceiling from the same run's identity and floor", async () => {
    const { code, stdout, stderr } = await runBench();
    expect(code, stderr).toBe(0);
    const rows = (JSON.parse(stdout) as { rows: Row[] }).rows;
    for (const turns of [2, 3]) {
      const identity = rows.find((r) =>
        r.measurement.startsWith(`agent loop, ${turns} turns (last body`),
      );
      const replay = rows.find(
        (r) =>
          r.measurement === `agent loop, ${turns} turns: replay via the openai SDK, memory store`,
      );
      expect(identity, `identity row for ${turns} turns`).toBeDefined();
      expect(replay, `replay row for ${turns} turns`).toBeDefined();
      const id = identity as Row;
      const re = replay as Row;
      expect(id.invocache).toBeGreaterThan(0);
      expect(id.baseline).toBeGreaterThan(0);
      // The floor's ms per loop, unrounded: the row's baseline is its turns/s.
      const floorMs = (turns * 1e3) / re.baseline;
      const m =
        /at most ([\d.]+)× with this run's identity \(([\d.]+) ms\/loop\) and a hit costing nothing, ([\d.]+)× with the identity at its target/.exec(
          re.note ?? "",
        );
      expect(m, re.note).not.toBeNull();
      const [, atMeasured, identityMs, atTarget] = (m as RegExpExecArray).map(Number);
      // The note's identity is the identity row's own figure (printed to 0.1 ms).
      expect(Math.abs((identityMs as number) - id.invocache)).toBeLessThanOrEqual(0.0501);
      // The ceilings, printed to 0.01.
      const ceiling = (identity: number) => floorMs / (floorMs + identity);
      expect(Math.abs((atMeasured as number) - ceiling(id.invocache))).toBeLessThanOrEqual(0.00501);
      expect(Math.abs((atTarget as number) - ceiling(1.5 * id.baseline))).toBeLessThanOrEqual(
        0.00501,
      );
    }
  }, 240_000);

  it("splits a replayed turn's CPU into parts whose derived figures are their arithmetic", async () => {
    const { code, stdout, stderr } = await runNode(
      [
        "--import",
        "tsx",
        "bench/support/agent-loop-split.ts",
        "--turns",
        "2",
        "--rounds",
        "1",
        "--warmup",
        "20",
        "--json",
      ],
      root,
      process.env,
    );
    expect(code, stderr).toBe(0);
    const out = JSON.parse(stdout) as {
      store: string;
      turns: number;
      us: Record<string, number>;
      derived: Record<string, number>;
    };
    expect(out.store).toBe("memory");
    expect(out.turns).toBe(2);
    const parts = ["sdk floor", "sdk replay", "createFetch", "identity", "store hit read"];
    expect(Object.keys(out.us).sort()).toEqual([...parts].sort());
    for (const p of parts) expect(out.us[p], p).toBeGreaterThan(0);
    const derived = Object.values(out.derived);
    expect(derived).toEqual([
      out.us["sdk replay"]! - out.us.createFetch!,
      out.us.createFetch! - out.us.identity!,
      out.us["sdk floor"]! / out.us["sdk replay"]!,
    ]);
  }, 240_000);

  it("refuses a store it does not know, with a usage message, before measuring", async () => {
    const { code, stdout, stderr } = await runNode(
      ["--import", "tsx", "bench/support/agent-loop-split.ts", "--store", "redis"],
      root,
      process.env,
    );
    expect(code).toBe(2);
    expect(stderr).toContain('--store must be one of memory, sqlite, cassette, got "redis"');
    expect(stdout).toBe("");
  }, 60_000);
});
