/**
 * Runs, attempts and verdicts: a planner → builder → reviewer-gate loop where
 * the gate rejects the builder's first output. Recorded once (auto), then
 * replayed (replay mode): same trajectory, same verdicts, same content hash,
 * zero upstream calls.
 * Run: npx tsx examples/recorder-runs.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRecorder, type Mode, type Recorder } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "invocache-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;
let upstreamCalls = 0;

/** A stand-in model: deterministic, slow, and counting its calls. */
async function model(role: string, prompt: string, attempt: number) {
  upstreamCalls++;
  await new Promise((r) => setTimeout(r, 50));
  return { role, text: `${role} output for "${prompt}" (attempt ${attempt})` };
}

async function pipeline(recorder: Recorder) {
  return recorder.run(
    async (run) => {
      const plan = await recorder.call(
        { role: "planner", model: "sim-1", prompt: "Plan a todo app" },
        () => model("planner", "Plan a todo app", 0),
      );
      const rows: string[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const req = { role: "builder", model: "sim-1", prompt: `Build: ${plan.text}` };
        await recorder.call(req, () => model("builder", req.prompt, attempt), { attempt });
        const accepted = attempt > 0; // the reviewer gate rejects the first build
        await recorder.verdict(recorder.last!.id, accepted ? "accepted" : "rejected", {
          reason: accepted ? "tests pass" : "tests fail",
        });
        rows.push(
          `builder attempt ${attempt}: ${recorder.last!.hit ? "hit " : "miss"} ${accepted ? "accepted" : "rejected"}`,
        );
        if (accepted) break;
      }
      return { rows, contentHash: run.contentHash() };
    },
    { runId: "todo-app" },
  );
}

async function once(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const before = upstreamCalls;
  const result = await pipeline(recorder);
  await recorder.close();
  console.log(`[${mode}] ${result.rows.join(" | ")}`);
  console.log(
    `[${mode}] upstream calls: ${upstreamCalls - before}, run hash ${result.contentHash.slice(0, 12)}`,
  );
  return result;
}

try {
  const recorded = await once("auto");
  const replayed = await once("replay");
  if (replayed.contentHash !== recorded.contentHash || upstreamCalls !== 3) {
    throw new Error("replay diverged from the recording");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
