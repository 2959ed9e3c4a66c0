/**
 * invocache/jest under real Jest (ESM test file, the built package): a test
 * whose OpenAI client has no fetch option records into its own cassette
 * (global mode), replays under CI with the provider gone, reports unused
 * entries, names the re-record command on a miss, and prints the summary line.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { ensureBuilt, repoRoot } from "../helpers/built-project.js";
import { plannerTest, project, runChild } from "./runner-helpers.js";

beforeAll(ensureBuilt, 300_000);

const JEST = join(repoRoot, "node_modules", "jest", "bin", "jest.js");

it("records, replays under CI, reports unused entries and misses, and sums up, under real Jest", async () => {
  const dir = project("jest", {
    "package.json": JSON.stringify({
      type: "module",
      jest: { testEnvironment: "node", transform: {} },
    }),
    "planner.test.mjs": plannerTest(
      "jest",
      "",
      (body) => `describe("planner", () => {\n  test("plans", ${body});\n});`,
    ),
  });
  const jest = (env: Record<string, string>) =>
    runChild(["--experimental-vm-modules", JEST, "--ci=false"], dir, env);
  const provider = await startFakeProvider();
  const url = provider.url;
  try {
    const recorded = await jest({ PROVIDER_URL: url, CALLS: "2", INVOCACHE_MODE: "record" });
    expect(recorded.code, recorded.output).toBe(0);
    expect(recorded.output).toContain("invocache: 0 calls replayed, 2 upstream calls, 0 misses");
    expect(provider.calls).toBe(2);
  } finally {
    await provider.close();
  }
  const files = readdirSync(join(dir, "cassettes", "planner"));
  expect(files).toEqual([expect.stringMatching(/^planner-plans-[0-9a-f]{10}\.yaml$/)]);

  const replayed = await jest({ PROVIDER_URL: url, CALLS: "2", CI: "1" });
  expect(replayed.code, replayed.output).toBe(0);
  expect(replayed.output).toContain("invocache: 2 calls replayed, 0 upstream calls, 0 misses");

  const fewer = await jest({ PROVIDER_URL: url, CALLS: "1", CI: "1" });
  expect(fewer.code, fewer.output).toBe(0);
  expect(fewer.output).toContain("1 recorded entry of");
  expect(fewer.output).toContain('was not used by "planner plans"');

  const more = await jest({ PROVIDER_URL: url, CALLS: "3", CI: "1" });
  expect(more.code).not.toBe(0);
  expect(more.output).toContain(
    "INVOCACHE_MODE=record npx jest planner.test.mjs -t '^planner plans$'",
  );
  // The failed test left its cassette as it was.
  expect(readdirSync(join(dir, "cassettes", "planner"))).toEqual(files);
});
