/**
 * LangGraph.js through invocache: a builder → reviewer loop where the
 * reviewer rejects the first build and clears it, so the builder sees the
 * same input again. LangGraph's own cache would serve the rejected build
 * forever; `InvocacheNodeCache` makes the retry a new attempt (RELOOP), and
 * `runGraph` records the thread as one run. Runs against a local fake
 * provider. Run: npx tsx examples/langgraph.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { createRecorder, type Mode } from "../src/index.js";
import {
  InvocacheNodeCache,
  invocacheCachePolicy,
  runGraph,
} from "../src/integrations/langgraph.js";
import { startFakeProvider } from "../test/fake-provider/index.js";

const provider = await startFakeProvider();
const dir = await mkdtemp(join(tmpdir(), "invocache-langgraph-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;

const State = Annotation.Root({
  task: Annotation<string>(),
  draft: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
  accepted: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
});

async function build(task: string): Promise<string> {
  const res = await fetch(`${provider.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: task }] }),
  });
  const body = (await res.json()) as { choices: { message: { content: string } }[] };
  return body.choices[0]?.message.content ?? "";
}

async function pipeline(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const graph = new StateGraph(State)
    .addNode("builder", async (s) => ({ draft: await build(s.task) }), {
      cachePolicy: invocacheCachePolicy(),
    })
    .addNode("reviewer", (s) =>
      s.draft?.startsWith("reply #1 ") ? { draft: null } : { accepted: s.draft },
    )
    .addEdge(START, "builder")
    .addEdge("builder", "reviewer")
    .addConditionalEdges("reviewer", (s) => (s.accepted === null ? "builder" : END), [
      "builder",
      END,
    ])
    .compile({ cache: new InvocacheNodeCache({ recorder, graph: "release" }) });
  const out = await runGraph(
    recorder,
    graph,
    { task: "Build release 1.2" },
    { configurable: { thread_id: "release-1.2" }, recursionLimit: 10 },
  );
  const stats = { ...recorder.stats };
  await recorder.close();
  return { out, stats };
}

try {
  const first = await pipeline("auto");
  assert.match(first.out.accepted ?? "", /^reply #2 /); // the retry was built anew
  await provider.close(); // the replay must not need it
  const second = await pipeline("replay");
  assert.deepEqual(second.out, first.out);
  assert.equal(provider.calls, 2);
  assert.equal(second.stats.hits, 2);
  console.log("recorded:", first.out.accepted);
  console.log(`replayed: identical, ${second.stats.hits} hits, 0 upstream calls`);
} finally {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
}
