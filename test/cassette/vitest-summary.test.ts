/**
 * The invocache/vitest run summary in a real vitest run of a small project:
 * InvocacheReporter prints one line with the calls replayed, upstream
 * calls, misses (with the re-record command) and the tokens, dollars and
 * model time saved; INVOCACHE_SUMMARY=0 turns it off.
 */
import { spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { costOf } from "../../src/usage/cost.js";
import { formatUsd } from "../../src/usage/summary.js";
import { tempDir } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const project = tempDir("vitest-summary");

const TEST = `import { expect, it } from "vitest";
import { withCassette } from ${JSON.stringify(join(repo, "src", "testing", "vitest.ts"))};

const suffix = process.env.PROMPT_SUFFIX ?? "";
const completion = () => ({
  id: "chatcmpl-1", object: "chat.completion", created: 1, model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
});
const ask = (recorder: any, prompt: string) =>
  recorder.call({ role: "tester", model: "gpt-4o-mini", prompt }, async () => {
    if (process.env.NO_NETWORK === "1") throw new Error("live call in a replay run");
    await new Promise((r) => setTimeout(r, 20));
    return completion();
  });

it("asks twice", withCassette(async ({ recorder }) => {
  await ask(recorder, "one");
  await ask(recorder, "two" + suffix);
}));
it("asks once", withCassette(async ({ recorder }) => {
  await ask(recorder, "three");
}));
it("opts out", withCassette({ summary: false }, async ({ recorder }) => {
  await ask(recorder, "four");
}));
`;

function setUp(): void {
  mkdirSync(join(project, "tests"), { recursive: true });
  symlinkSync(join(repo, "node_modules"), join(project, "node_modules"), "dir");
  writeFileSync(
    join(project, "vitest.config.mts"),
    `import { InvocacheReporter } from ${JSON.stringify(join(repo, "src", "testing", "summary.ts"))};
export default { test: { include: ["tests/**/*.test.ts"], reporters: ["default", new InvocacheReporter()] } };
`,
  );
  writeFileSync(join(project, "tests", "ask.test.ts"), TEST);
}

function run(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v !== undefined &&
      !k.startsWith("VITEST") &&
      !k.startsWith("INVOCACHE") &&
      k !== "CI" &&
      k !== "NODE_OPTIONS"
    )
      base[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(join(repo, "node_modules", ".bin", "vitest"), ["run"], {
      cwd: project,
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, out }));
  });
}

const line = (out: string) => out.split("\n").filter((l) => l.startsWith("invocache:"));

describe("InvocacheReporter", () => {
  it("prints what the run replayed, called and saved; names the re-record command of a miss", async () => {
    setUp();
    const recorded = await run({});
    expect(recorded.code, recorded.out).toBe(0);
    // Three calls recorded (the opted-out test is not counted), nothing replayed yet.
    expect(line(recorded.out)).toStrictEqual([
      "invocache: 0 calls replayed, 3 upstream calls, 3 misses · saved 0 tokens ($0), 0 ms of model time (prices of 2026-09-23)",
    ]);

    const replayed = await run({ CI: "true", NO_NETWORK: "1" });
    expect(replayed.code, replayed.out).toBe(0);
    const usd = formatUsd(
      3 *
        costOf("gpt-4o-mini", { shape: "openai.chat", inputTokens: 1000, outputTokens: 500 })!.usd,
    );
    const [summary] = line(replayed.out);
    expect(summary).toMatch(
      new RegExp(
        `^invocache: 3 calls replayed, 0 upstream calls, 0 misses · saved 4\\.5k tokens \\(\\${usd}\\), \\d+ ms of model time \\(prices of \\d{4}-\\d{2}-\\d{2}\\)$`,
      ),
    );

    const missed = await run({ CI: "true", NO_NETWORK: "1", PROMPT_SUFFIX: " changed" });
    expect(missed.code).toBe(1);
    expect(missed.out).toMatch(
      /invocache: 2 calls replayed, 0 upstream calls, 1 miss · saved 3k tokens .*\n {2}re-record: INVOCACHE_MODE=record npx vitest run tests\/ask\.test\.ts -t/,
    );

    const off = await run({ CI: "true", NO_NETWORK: "1", INVOCACHE_SUMMARY: "0" });
    expect(off.code, off.out).toBe(0);
    expect(line(off.out)).toStrictEqual([]);
  }, 120_000);
});
