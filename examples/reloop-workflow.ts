/**
 * RELOOP end to end: a builder step calls a model through the OpenAI SDK, a
 * gate rejects the first draft, the retry (attempt 1) gets a fresh upstream
 * call and the gate accepts it. A second run in `replay` mode, with the
 * provider stopped, reproduces the whole trajectory and the gate's verdicts
 * with zero upstream calls; a different verdict or trajectory would throw.
 * Run: npx tsx examples/reloop-workflow.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { createFetch, withInvocation } from "../src/adapters/index.js";
import { createRecorder, type Mode, shortId } from "../src/index.js";
import { startFakeProvider } from "../test/fake-provider/index.js";

const provider = await startFakeProvider();
const dir = await mkdtemp(join(tmpdir(), "invocache-reloop-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;

interface Row {
  run: Mode;
  attempt: number;
  id: string;
  served: "live" | "replay";
  verdict: "accepted" | "rejected";
  upstream: number;
}

/** The gate: a build plan must mention tests. */
function gate(draft: string): { verdict: "accepted" | "rejected"; reason: string } {
  return draft.includes("tests")
    ? { verdict: "accepted", reason: "mentions tests" }
    : { verdict: "rejected", reason: "no tests in the plan" };
}

async function buildLoop(mode: Mode): Promise<{ rows: Row[]; contentHash: string }> {
  const recorder = createRecorder({ store, mode });
  const openai = new OpenAI({
    apiKey: "sk-example-key",
    baseURL: `${provider.url}/v1`,
    fetch: createFetch({ recorder }),
    maxRetries: 0,
  });
  const rows: Row[] = [];
  // One run scope with a stable id: its trajectory is stored and compared on replay.
  const contentHash = await recorder.run(
    async (run) => {
      let feedback = "";
      for (let attempt = 0; attempt < 3; attempt++) {
        const draft = await withInvocation({ role: "builder", task: "ship 1.2", attempt }, () =>
          openai.chat.completions.create({
            model: "gpt-5",
            messages: [{ role: "user", content: `Write the build plan.${feedback}` }],
          }),
        );
        const served = recorder.last!; // sequential loop: this call's identity
        const text = draft.choices[0]?.message.content ?? "";
        const { verdict, reason } = gate(text);
        await recorder.verdict(served.id, verdict, { reason });
        rows.push({
          run: mode,
          attempt,
          id: shortId(served.id),
          served: served.hit ? "replay" : "live",
          verdict,
          upstream: provider.calls,
        });
        if (verdict === "accepted") break;
        feedback = ` Rejected before (${reason}): include tests.`;
      }
      return run.contentHash();
    },
    { runId: "reloop-demo" },
  );
  await recorder.close();
  return { rows, contentHash };
}

try {
  const recorded = await buildLoop("auto");
  await provider.close(); // replay must not need the provider
  const replayed = await buildLoop("replay");

  console.table([...recorded.rows, ...replayed.rows]);
  assert.deepEqual(
    recorded.rows.map((r) => r.verdict),
    ["rejected", "accepted"],
  );
  assert.notEqual(recorded.rows[0]?.id, recorded.rows[1]?.id, "the retry is a new identity");
  assert.deepEqual(
    replayed.rows.map(({ id, verdict, served }) => ({ id, verdict, served })),
    recorded.rows.map(({ id, verdict }) => ({ id, verdict, served: "replay" })),
  );
  assert.equal(replayed.contentHash, recorded.contentHash);
  assert.equal(provider.calls, 2, "two upstream calls while recording, none on replay");
  console.log(`trajectory ${shortId(recorded.contentHash)} reproduced with 0 upstream calls`);
} finally {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
}
