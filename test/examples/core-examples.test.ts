import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";

const root = resolve(import.meta.dirname, "../..");
// Resolved from this repo, since the examples run from a scratch directory.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const cwd = tempDir("examples");

/** Run an example the way the README says, from a scratch directory. */
function run(file: string) {
  return spawnSync(process.execPath, ["--import", tsx, join(root, file)], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, INVOCACHE_MODE: "" },
    timeout: 60_000,
  });
}

describe("examples run as documented", () => {
  it("quickstart: first run misses, second run replays everything", () => {
    const first = run("examples/quickstart.ts");
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/attempt 0: miss/);
    expect(first.stdout).toMatch(/attempt 1: miss/);
    const second = run("examples/quickstart.ts");
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).not.toMatch(/: miss/);
    expect(second.stdout).toMatch(/upstream calls this run: 0/);
  });

  it("recorder-runs: replay reproduces trajectory and verdicts with zero upstream calls", () => {
    const r = run("examples/recorder-runs.ts");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\[replay\] upstream calls: 0/);
  });
});
