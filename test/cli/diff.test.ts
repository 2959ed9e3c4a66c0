/**
 * `invocache diff RUN_A RUN_B`, run in process against real stored runs:
 * the demo's two runs (recorded, then replayed) in a SQLite store, and a
 * three-step pipeline recorded through the recorder whose planner prompt
 * changes in a later run.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run.js";
import { createRecorder } from "../../src/index.js";
import { openStore } from "../../src/store/index.js";
import type { RunDiff } from "../../src/viewer/index.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

async function diff(cwd: string, args: string[]) {
  const io = fakeIo(cwd);
  const code = await runCli(["diff", ...args], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

describe("invocache diff on the demo's two runs", () => {
  const cwd = tempDir("diff-demo");
  const store = `sqlite://${join(cwd, "demo.sqlite")}`;
  beforeAll(async () => {
    const io = fakeIo(cwd);
    expect(await runCli(["demo", "--store", store], io), io.stderr()).toBe(0);
  }, 60_000);

  it("reports no divergence (exit 0)", async () => {
    const r = await diff(cwd, ["demo-1", "demo-2", "--store", store, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout) as RunDiff;
    expect(d).toMatchObject({ same: true, divergedAt: null, why: [], note: null });
    expect(d.steps.length).toBeGreaterThanOrEqual(3);
    expect(d.steps.every((s) => s.same)).toBe(true);
    // The first run recorded what the second replayed.
    expect(d.steps.map((s) => [s.a?.served, s.b?.served])).toContainEqual(["recorded", "hit"]);
    const text = await diff(cwd, ["demo-1", "demo-2", "--store", store]);
    expect(text.stdout).toContain("Same: runs demo-1 and demo-2");
  });
});

describe("invocache diff on a run whose planner prompt changed", () => {
  const cwd = tempDir("diff-changed");
  const url = `sqlite://${join(cwd, "cache.sqlite")}`;

  async function pipeline(runId: string, planPrompt: string) {
    const recorder = createRecorder({ store: openStore(url), mode: "auto" });
    await recorder.run(
      async () => {
        const plan = await recorder.call(
          { role: "planner", model: "gpt-5", prompt: planPrompt },
          async () => ({ text: `plan for: ${planPrompt}` }),
        );
        for (let attempt = 0; attempt < 2; attempt++) {
          await recorder.call(
            { role: "builder", model: "gpt-5", prompt: `Build ${plan.text}` },
            async () => ({ text: `build ${attempt}` }),
            { attempt },
          );
          await recorder.verdict(recorder.last!.id, attempt === 0 ? "rejected" : "accepted");
        }
      },
      { runId },
    );
    await recorder.close();
  }

  beforeAll(async () => {
    await pipeline("base", "Plan a slugify function");
    await pipeline("again", "Plan a slugify function");
    await pipeline("changed", "Plan a slugify function with tests");
  });

  it("the same pipeline replayed is the same run", async () => {
    const r = await diff(cwd, ["base", "again", "--store", url]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("names step 1 and the prompt field, then the steps side by side (exit 1)", async () => {
    const r = await diff(cwd, ["base", "changed", "--store", url, "--json"]);
    expect(r.code, r.stderr).toBe(1);
    const d = JSON.parse(r.stdout) as RunDiff;
    expect(d.same).toBe(false);
    expect(d.divergedAt).toBe(1);
    expect(d.why.map((w) => w.field)).toStrictEqual(["prompt"]);
    expect(d.why[0]?.diff).toContain("{+ with tests+}");
    expect(d.steps.map((s) => [s.a?.role, s.a?.attempt, s.a?.verdict, s.b?.served])).toStrictEqual([
      ["planner", 0, null, "recorded"],
      ["builder", 0, "rejected", "recorded"],
      ["builder", 1, "accepted", "recorded"],
    ]);
    const text = await diff(cwd, ["base", "changed", "--store", url]);
    expect(text.stdout).toContain("differ at step 1");
    expect(text.stdout).toContain("prompt:");
  });

  it("a run that is not stored is a usage error (exit 2)", async () => {
    const r = await diff(cwd, ["base", "nope", "--store", url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no run "nope"');
  });
});
