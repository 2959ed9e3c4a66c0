/**
 * Version ranges, lowest end: the integrations' key scenario (LangChain's
 * cache and fetch routes, a LangGraph run with the node cache, an agent
 * with a handoff and a recorded tool) against the lowest release of each
 * peer range that runs on Node 20 (test/compat/package.json), installed
 * from the npm registry into a fixture and run on the built package. The
 * newest releases are the repository's own dev dependencies, run by
 * test/integrations/. Providers on loopback; the replay runs with them
 * stopped and counts zero upstream calls and zero tool executions.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { tempDir } from "../helpers/tmp.js";
import {
  type ScriptedResponses,
  startScriptedResponses,
} from "../integrations/scripted-responses.js";
import { pinnedVersions, prepareFixture } from "./fixture.js";

interface Outcome {
  code: number;
  stderr: string;
  result?: {
    versions: Record<string, string | null>;
    langchain: string[];
    langgraph: { plan: string; steps: string[] };
    agents: { output: string; agent: string };
    toolRuns: number;
    stats: { hits: number; recorded: number };
  };
}

let fixture: Awaited<ReturnType<typeof prepareFixture>>;
let provider: FakeProvider;
let agents: ScriptedResponses;
let store: string;
/** The recording run, made once for both tests; the providers are stopped after it. */
let first: Outcome;
let upstream: { models: number; agents: number };

beforeAll(async () => {
  fixture = await prepareFixture(); // first run on a machine: an npm install (about a minute)
  provider = await startFakeProvider();
  agents = await startScriptedResponses();
  store = `sqlite://${join(tempDir("compat"), "cache.sqlite")}`;
  first = await scenario("auto");
  upstream = { models: provider.calls, agents: agents.calls };
  await provider.close();
  await agents.close();
}, 600_000);
afterAll(async () => {
  await provider?.close();
  await agents?.close();
  fixture?.cleanup();
});

function scenario(mode: "auto" | "replay", env: Record<string, string> = {}): Promise<Outcome> {
  const { INVOCACHE_MODE: _m, INVOCACHE_TOOL_MODE: _t, ...rest } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["scenario.mjs", mode],
      {
        cwd: fixture.dir,
        timeout: 110_000,
        env: {
          ...rest,
          COMPAT_STORE: store,
          COMPAT_PROVIDER: provider.url,
          COMPAT_AGENTS: agents.url,
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        const line = stdout.trim().split("\n").at(-1) ?? "";
        resolve({ code, stderr, ...(code === 0 ? { result: JSON.parse(line) } : {}) });
      },
    );
  });
}

describe("the lowest framework releases of the peer ranges", () => {
  it("record, then replay with the providers stopped: zero upstream calls, zero tool runs", async () => {
    expect(first.code, first.stderr).toBe(0);
    const recorded = first.result;
    // The integrations loaded the pinned releases, not the repository's.
    expect(recorded?.versions).toStrictEqual(pinnedVersions());
    expect(recorded?.langchain[0]).toMatch(/^reply #\d+ /);
    expect(recorded?.langchain[1]).toMatch(/^reply #\d+ /);
    expect(recorded?.langgraph.steps).toHaveLength(3);
    expect(recorded?.agents).toStrictEqual({
      output: "reply #3: order 42 shipped",
      agent: "Billing agent",
    });
    expect(recorded?.toolRuns).toBe(1);
    // Model calls: cache route, stream, graph planner; agents: three turns.
    expect(upstream).toStrictEqual({ models: 3, agents: 3 });

    const second = await scenario("replay");
    expect(second.code, second.stderr).toBe(0);
    const { stats, toolRuns, ...replayed } = second.result ?? { stats: {}, toolRuns: -1 };
    const { stats: recordedStats, toolRuns: _runs, ...original } = recorded ?? { stats: {} };
    expect(replayed).toStrictEqual(original);
    expect(toolRuns).toBe(0);
    expect({ models: provider.calls, agents: agents.calls }).toStrictEqual(upstream);
    expect(stats).toStrictEqual({ hits: recordedStats.recorded, recorded: 0 });
  }, 300_000);

  it("a miss names the differing field through the lowest LangChain", async () => {
    expect(first.code, first.stderr).toBe(0); // the recording it misses against
    const miss = await scenario("replay", { COMPAT_TEMPERATURE: "0.7" });
    expect(miss.code).not.toBe(0);
    expect(miss.stderr).toContain("ReplayMissError");
    expect(miss.stderr).toContain("params.temperature: 0 → 0.7");
  }, 120_000);
});
