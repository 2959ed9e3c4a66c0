/** examples/agent-tools.ts runs as documented: the replay executes no tool and calls no model. */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

it("agent-tools: records, then replays with the provider and the MCP server stopped", () => {
  const r = spawnSync(process.execPath, ["--import", tsx, join(root, "examples/agent-tools.ts")], {
    encoding: "utf8",
    env: { ...process.env, INVOCACHE_MODE: "" },
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/\[auto\] .*model calls: 2 \| tool executions: 2/);
  expect(r.stdout).toMatch(
    /\[replay\] answer: The total is 5 euros\. \| model calls: 0 \| tool executions: 0/,
  );
});
