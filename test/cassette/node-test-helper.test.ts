/**
 * invocache/node-test under the real `node --test` (the built package): a
 * test whose OpenAI client has no fetch option records into its own cassette
 * (global mode), replays under CI with the provider gone, reports unused
 * entries, names the re-record command on a miss, refuses two tests of one
 * name, and prints the summary line.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { startFakeProvider } from "../fake-provider/index.js";
import { ensureBuilt } from "../helpers/built-project.js";
import { plannerTest, project, runChild } from "./runner-helpers.js";

beforeAll(ensureBuilt, 300_000);

const HEAD = 'import { describe, test } from "node:test";';

it("records, replays under CI, reports unused entries and misses, and sums up, under node --test", async () => {
  const dir = project("node-test", {
    "planner.test.mjs": plannerTest(
      "node-test",
      HEAD,
      (body) => `describe("planner", () => {\n  test("plans", ${body});\n});`,
    ),
  });
  const nodeTest = (env: Record<string, string>) =>
    runChild(["--test", "planner.test.mjs"], dir, env);
  const provider = await startFakeProvider();
  const url = provider.url;
  try {
    const recorded = await nodeTest({ PROVIDER_URL: url, CALLS: "2", INVOCACHE_MODE: "record" });
    expect(recorded.code, recorded.output).toBe(0);
    expect(recorded.output).toContain("invocache: 0 calls replayed, 2 upstream calls, 0 misses");
    expect(provider.calls).toBe(2);
  } finally {
    await provider.close();
  }
  const files = readdirSync(join(dir, "cassettes", "planner"));
  expect(files).toEqual([expect.stringMatching(/^planner-plans-[0-9a-f]{10}\.yaml$/)]);

  const replayed = await nodeTest({ PROVIDER_URL: url, CALLS: "2", CI: "1" });
  expect(replayed.code, replayed.output).toBe(0);
  expect(replayed.output).toContain("invocache: 2 calls replayed, 0 upstream calls, 0 misses");

  const fewer = await nodeTest({ PROVIDER_URL: url, CALLS: "1", CI: "1" });
  expect(fewer.code, fewer.output).toBe(0);
  expect(fewer.output).toContain("1 recorded entry of");
  expect(fewer.output).toContain('was not used by "planner > plans"');

  const more = await nodeTest({ PROVIDER_URL: url, CALLS: "3", CI: "1" });
  expect(more.code).not.toBe(0);
  expect(more.output).toContain(
    "INVOCACHE_MODE=record node --test --test-name-pattern 'plans$' planner.test.mjs",
  );
  expect(readdirSync(join(dir, "cassettes", "planner"))).toEqual(files);
});

it("refuses a second test of the same full name in one file", async () => {
  const dir = project("node-test-dup", {
    "dup.test.mjs": `${HEAD}
import { withCassette } from "invocache/node-test";
test("same", withCassette(async () => {}));
test("same", withCassette(async () => {}));
`,
  });
  const run = await runChild(["--test", "dup.test.mjs"], dir, { INVOCACHE_MODE: "record" });
  expect(run.code).not.toBe(0);
  expect(run.output).toContain('are both named "same"');
});
