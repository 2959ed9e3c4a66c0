/**
 * Any async step of a workflow engine (a Temporal activity, an Inngest step,
 * a LangGraph node, a hand-written loop) memoized as an invocation with
 * `wrapStep`: the step keeps its signature; role, task and attempt come from
 * `withInvocation`. Here the step calls a model with plain fetch, the way a
 * custom client would.
 * Run: npx tsx examples/workflow-step.ts
 */
import assert from "node:assert/strict";
import { withInvocation, wrapStep } from "../src/adapters/index.js";
import { createRecorder, type Mode, openStore, type Recorder } from "../src/index.js";
import { startFakeProvider } from "../test/fake-provider/index.js";

const provider = await startFakeProvider();
const store = openStore("memory://"); // shared by both runs

/** The step: classify a ticket with a model. Its result must be JSON. */
async function classify(ticket: { id: string; text: string }): Promise<{ label: string }> {
  const res = await fetch(`${provider.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-example-key" },
    body: JSON.stringify({
      model: "gpt-5-mini",
      messages: [{ role: "user", content: `Label this ticket: ${ticket.text}` }],
    }),
  });
  const body = (await res.json()) as { choices: { message: { content: string } }[] };
  return { label: body.choices[0]?.message.content ?? "" };
}

async function workflow(recorder: Recorder) {
  const step = wrapStep(recorder, classify); // same signature as classify
  const tickets = [
    { id: "T-1", text: "The build is red" },
    { id: "T-2", text: "Docs typo" },
  ];
  const labels: string[] = [];
  for (const ticket of tickets) {
    const { label } = await withInvocation({ role: "triage", task: ticket.id }, () => step(ticket));
    labels.push(label);
  }
  return labels;
}

async function run(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const labels = await workflow(recorder);
  return { labels, hits: recorder.stats.hits };
}

try {
  const first = await run("auto");
  await provider.close();
  const second = await run("replay");
  assert.deepEqual(second.labels, first.labels);
  assert.equal(provider.calls, 2);
  assert.equal(second.hits, 2);
  console.log("labels:", first.labels);
  console.log("replayed with 0 upstream calls");
} finally {
  await provider.close();
  await store.close();
}
