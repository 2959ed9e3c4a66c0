/**
 * invocache/vitest in a real vitest run of a small project: parallel
 * workers (forks, then threads) record per-test cassettes and one shared
 * cassette, CI replays them with the network off, a changed prompt fails
 * with a command that re-records just that test, and running that command
 * fixes it without touching the other cassettes.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readCassette } from "../../src/cassette/index.js";
import { tempDir } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const project = tempDir("vitest-project");

function fixture(name: string): string {
  return `import { describe, expect, it } from "vitest";
import { withCassette } from ${JSON.stringify(join(repo, "src", "testing", "vitest.ts"))};

const suffix = process.env.PROMPT_SUFFIX_${name.toUpperCase()} ?? "";
async function upstream(prompt: string) {
  if (process.env.NO_NETWORK === "1") throw new Error("live call in a replay run: " + prompt);
  return { answer: "answer to " + prompt };
}
const ask = (recorder: any, prompt: string) =>
  recorder.call({ role: "tester", model: "m", prompt }, () => upstream(prompt));

describe("file ${name}", () => {
  it("asks the same thing twice (${name})", withCassette(async ({ recorder }) => {
    expect(await ask(recorder, "${name}-1" + suffix)).toEqual({ answer: "answer to ${name}-1" + suffix });
    expect(await ask(recorder, "${name}-1" + suffix)).toEqual({ answer: "answer to ${name}-1" + suffix });
  }));
  it("writes to the shared cassette", withCassette({ name: "shared/all", report: () => {} }, async ({ recorder }) => {
    expect(await ask(recorder, "shared from ${name}")).toEqual({ answer: "answer to shared from ${name}" });
  }));
});
`;
}

function setUp(): void {
  mkdirSync(join(project, "tests"), { recursive: true });
  symlinkSync(join(repo, "node_modules"), join(project, "node_modules"), "dir");
  writeFileSync(
    join(project, "vitest.config.mjs"),
    'export default { test: { include: ["tests/**/*.test.ts"], pool: process.env.POOL || "forks" } };\n',
  );
  for (const name of ["a", "b", "c"])
    writeFileSync(join(project, "tests", `${name}.test.ts`), fixture(name));
}

/** Run a command in the project with a clean environment (no outer vitest or CI variables). */
function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v !== undefined &&
      !k.startsWith("VITEST") &&
      k !== "CI" &&
      k !== "INVOCACHE_MODE" &&
      k !== "NODE_OPTIONS"
    )
      base[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
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

const vitest = join(repo, "node_modules", ".bin", "vitest");

function cassettes(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(project, p), readFileSync(p, "utf8"));
    }
  };
  walk(join(project, "cassettes"));
  return out;
}

describe("invocache/vitest in a vitest run", () => {
  it("records in parallel workers, replays under CI, and the miss message's command re-records one test", async () => {
    setUp();
    const recorded = await run(vitest, ["run"], { POOL: "forks" });
    expect(recorded.code, recorded.out).toBe(0);
    const first = cassettes();
    expect([...first.keys()].filter((k) => k.endsWith(".yaml")).sort()).toStrictEqual([
      expect.stringMatching(/^cassettes\/shared\/all\.yaml$/),
      expect.stringMatching(
        /^cassettes\/tests\/a\/file-a-asks-the-same-thing-twice-a-[0-9a-f]{10}\.yaml$/,
      ),
      expect.stringMatching(
        /^cassettes\/tests\/b\/file-b-asks-the-same-thing-twice-b-[0-9a-f]{10}\.yaml$/,
      ),
      expect.stringMatching(
        /^cassettes\/tests\/c\/file-c-asks-the-same-thing-twice-c-[0-9a-f]{10}\.yaml$/,
      ),
    ]);
    // Three workers merged into the shared cassette: nothing lost.
    expect(await readCassette(join(project, "cassettes", "shared", "all.yaml"))).toHaveLength(3);

    const replayed = await run(vitest, ["run"], { POOL: "threads", CI: "true", NO_NETWORK: "1" });
    expect(replayed.code, replayed.out).toBe(0);
    expect(cassettes()).toStrictEqual(first);

    const changed = await run(vitest, ["run"], {
      CI: "true",
      NO_NETWORK: "1",
      PROMPT_SUFFIX_B: " (v2)",
    });
    expect(changed.code).toBe(1);
    expect(changed.out).toContain("no recording for tester (m)");
    const command = /INVOCACHE_MODE=record npx vitest run (\S+) -t '([^']+)'/.exec(changed.out);
    expect(command?.[0]).toBe(
      "INVOCACHE_MODE=record npx vitest run tests/b.test.ts -t '^file b asks the same thing twice \\(b\\)$'",
    );

    // Run exactly that command (without npx: it would only find the same binary).
    const fixed = await run(vitest, ["run", command![1]!, "-t", command![2]!], {
      INVOCACHE_MODE: "record",
      PROMPT_SUFFIX_B: " (v2)",
    });
    expect(fixed.code, fixed.out).toBe(0);
    expect(fixed.out).toMatch(/1 passed/);
    const after = cassettes();
    const changedFiles = [...after].filter(([k, v]) => first.get(k) !== v).map(([k]) => k);
    expect(changedFiles).toStrictEqual([expect.stringMatching(/^cassettes\/tests\/b\//)]);
    expect(after.get(changedFiles[0]!)).toContain("b-1 (v2)");
    expect(after.get(changedFiles[0]!)).not.toContain("prompt: b-1\n");

    const again = await run(vitest, ["run"], {
      CI: "true",
      NO_NETWORK: "1",
      PROMPT_SUFFIX_B: " (v2)",
    });
    expect(again.code, again.out).toBe(0);
  }, 90_000);
});
