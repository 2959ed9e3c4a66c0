/** The framework examples run standalone (as `npx tsx examples/<name>.ts`) and exit 0: CI runs them here. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const EXAMPLES = ["langchain", "langgraph", "openai-agents"];

function runExample(name: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // The examples choose their modes; the caller's INVOCACHE_MODE must not leak in.
  const { INVOCACHE_MODE: _mode, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", `examples/${name}.ts`],
      { cwd: root, env, timeout: 110_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe.concurrent("framework examples", () => {
  for (const name of EXAMPLES) {
    it(`examples/${name}.ts exits 0 and replays with 0 upstream calls`, async () => {
      const { code, stdout, stderr } = await runExample(name);
      expect(code, `${name} failed:\n${stdout}\n${stderr}`).toBe(0);
      expect(stdout).toMatch(/0 upstream calls/);
    }, 120_000); // three framework imports in fresh processes: slow on a loaded machine
  }
});
