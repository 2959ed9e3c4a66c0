/**
 * LangGraph.js through invocache with the real @langchain/langgraph: node
 * caching (RELOOP across a reviewer → builder loop, no collisions across
 * graphs or between inputs JSON writes alike) and a graph run as one run
 * scope, against the fake provider on loopback.
 */

import { Annotation, END, GraphRecursionError, START, StateGraph } from "@langchain/langgraph";
import { InMemoryCache } from "@langchain/langgraph-checkpoint";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch, type Recorder, ReplayMissError, withInvocation } from "../../src/index.js";
import {
  graphRunId,
  IntegrationError,
  InvocacheNodeCache,
  invocacheCachePolicy,
  runGraph,
} from "../../src/integrations/langgraph.js";
import { runKey } from "../../src/store/index.js";
import { sqliteSandbox } from "../adapters/helpers.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

let provider: FakeProvider;
let box: Awaited<ReturnType<typeof sqliteSandbox>>;

beforeEach(async () => {
  provider = await startFakeProvider();
  box = await sqliteSandbox();
});
afterEach(async () => {
  await provider.close();
  await box.cleanup();
});

/** A model call straight to the provider (no invocache): only the node cache can save it. */
async function draftFromProvider(task: string): Promise<string> {
  const res = await fetch(`${provider.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: task }] }),
  });
  const body = (await res.json()) as { choices: { message: { content: string } }[] };
  return body.choices[0]?.message.content ?? "";
}

const Loop = Annotation.Root({
  task: Annotation<string>(),
  // A rejection clears the draft, so the builder sees the same input again.
  draft: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
  accepted: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
});

/** builder → reviewer → (rejected: back to builder | accepted: end). The first build is always rejected. */
function reviewLoop(cache: InMemoryCache | InvocacheNodeCache) {
  return new StateGraph(Loop)
    .addNode("builder", async (s) => ({ draft: await draftFromProvider(s.task) }), {
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
    .compile({ cache });
}

describe("InvocacheNodeCache", () => {
  it("the control: LangGraph's own cache serves the rejected build again, forever", async () => {
    const graph = reviewLoop(new InMemoryCache());
    await expect(
      graph.invoke({ task: "build the release" }, { recursionLimit: 12 }),
    ).rejects.toBeInstanceOf(GraphRecursionError);
    expect(provider.calls).toBe(1); // every retry was the cached, rejected build
  });

  it("RELOOP: the retry after a rejection is a new attempt; a replay needs no provider", async () => {
    const pipeline = (recorder: Recorder) =>
      runGraph(
        recorder,
        reviewLoop(new InvocacheNodeCache({ recorder, graph: "review-loop" })),
        { task: "build the release" },
        { configurable: { thread_id: "ticket-42" }, recursionLimit: 12 },
      );
    const first = await pipeline(box.recorder("auto"));
    expect(first.accepted).toMatch(/^reply #2 /);
    expect(provider.calls).toBe(2);
    await provider.close();
    const replayer = box.recorder("replay");
    const second = await pipeline(replayer);
    expect(second).toStrictEqual(first);
    expect(provider.calls).toBe(2);
    expect(replayer.stats.hits).toBe(2);
    expect(replayer.last?.manifest).toMatchObject({ role: "builder", attempt: 1 });
  });

  it("never shares entries across graphs with a node of the same name", async () => {
    const Same = Annotation.Root({ input: Annotation<string>(), out: Annotation<string>() });
    const build = (name: string, cache: InMemoryCache | InvocacheNodeCache) =>
      new StateGraph(Same)
        .addNode("builder", () => ({ out: `built by ${name}` }), { cachePolicy: {} })
        .addEdge(START, "builder")
        .addEdge("builder", END)
        .compile({ cache });
    const shared = new InMemoryCache();
    await build("alpha", shared).invoke({ input: "x" });
    // The control: LangGraph's key has no graph in it.
    expect((await build("beta", shared).invoke({ input: "x" })).out).toBe("built by alpha");

    const recorder = box.recorder("auto");
    await build("alpha", new InvocacheNodeCache({ recorder, graph: "alpha" })).invoke({
      input: "x",
    });
    const beta = await build("beta", new InvocacheNodeCache({ recorder, graph: "beta" })).invoke({
      input: "x",
    });
    expect(beta.out).toBe("built by beta");
  });

  it("tells apart inputs that JSON.stringify writes alike (a Date and its ISO string)", async () => {
    const When = Annotation.Root({ when: Annotation<unknown>(), seen: Annotation<string>() });
    const at = new Date("2026-01-01T00:00:00.000Z");
    const build = (cache: InMemoryCache | InvocacheNodeCache, policy: object) =>
      new StateGraph(When)
        .addNode("kind", (s) => ({ seen: s.when instanceof Date ? "date" : typeof s.when }), {
          cachePolicy: policy,
        })
        .addEdge(START, "kind")
        .addEdge("kind", END)
        .compile({ cache });
    const control = build(new InMemoryCache(), {});
    await control.invoke({ when: at });
    expect((await control.invoke({ when: at.toISOString() })).seen).toBe("date"); // collided

    const recorder = box.recorder("auto");
    const graph = build(
      new InvocacheNodeCache({ recorder, graph: "when" }),
      invocacheCachePolicy(),
    );
    expect((await graph.invoke({ when: at })).seen).toBe("date");
    expect((await graph.invoke({ when: at.toISOString() })).seen).toBe("string");
  });

  it("a replay miss names the differing field (another graph name: params.graph)", async () => {
    const recorder = box.recorder("auto");
    await runGraph(
      recorder,
      reviewLoop(new InvocacheNodeCache({ recorder, graph: "review-loop" })),
      {
        task: "build the release",
      },
    );
    const replayer = box.recorder("replay");
    const miss = await reviewLoop(new InvocacheNodeCache({ recorder: replayer, graph: "renamed" }))
      .invoke({ task: "build the release" })
      .catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(ReplayMissError);
    expect((miss as ReplayMissError).message).toContain('params.graph: "review-loop" → "renamed"');
  });

  it("stores node writes as JSON, with secrets redacted like every response", async () => {
    const key = "sk-proj-nodecachesecret0123456789abcdef";
    const Out = Annotation.Root({ input: Annotation<string>(), out: Annotation<string>() });
    const recorder = box.recorder("auto");
    const graph = new StateGraph(Out)
      .addNode("leaky", () => ({ out: `configured with ${key} and a Date` }), { cachePolicy: {} })
      .addEdge(START, "leaky")
      .addEdge("leaky", END)
      .compile({ cache: new InvocacheNodeCache({ recorder, graph: "leaky" }) });
    expect((await graph.invoke({ input: "x" })).out).toContain(key); // live: untouched
    const bytes = await box.bytes();
    expect(bytes.includes(Buffer.from("configured with"))).toBe(true); // the control: readable JSON
    expect(bytes.includes(Buffer.from(key))).toBe(false);
  });

  it("graph.clearCache() does not delete recordings: it throws, naming the fix", async () => {
    const recorder = box.recorder("auto");
    const graph = reviewLoop(new InvocacheNodeCache({ recorder, graph: "review-loop" }));
    await expect(graph.clearCache()).rejects.toBeInstanceOf(IntegrationError);
  });

  it("refuses a cache without a graph name, or made inside a run", async () => {
    const recorder = box.recorder("auto");
    expect(() => new InvocacheNodeCache({ recorder } as never)).toThrow(/options.graph/);
    await recorder.run(async () => {
      expect(() => new InvocacheNodeCache({ recorder, graph: "g" })).toThrow(
        /outside recorder.run/,
      );
    });
  });
});

describe("runGraph: a graph run is one run scope", () => {
  const Plan = Annotation.Root({
    task: Annotation<string>(),
    plan: Annotation<string>(),
    build: Annotation<string>(),
    runId: Annotation<string>(),
  });

  function plannerBuilder(recorder: Recorder) {
    const openai = new OpenAI({
      apiKey: "sk-graph-test",
      baseURL: `${provider.url}/v1`,
      fetch: createFetch({ recorder }),
      maxRetries: 0,
    });
    const ask = async (role: string, content: string) => {
      const r = await withInvocation({ role }, () =>
        openai.chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content }] }),
      );
      return r.choices[0]?.message.content ?? "";
    };
    return new StateGraph(Plan)
      .addNode("planner", async (s) => ({
        plan: await ask("planner", `Plan ${s.task}`),
        runId: recorder.currentRun()?.runId ?? "none",
      }))
      .addNode("builder", async (s) => ({ build: await ask("builder", `Build ${s.plan}`) }))
      .addEdge(START, "planner")
      .addEdge("planner", "builder")
      .addEdge("builder", END)
      .compile();
  }

  it("records the model calls of a thread as one run and replays it with the provider stopped", async () => {
    const config = { configurable: { thread_id: "ticket:42" } };
    const recorder = box.recorder("auto");
    const first = await runGraph(recorder, plannerBuilder(recorder), { task: "1.2" }, config);
    expect(first.runId).toBe("thread-ticket%3A42");
    const run = (await recorder.store.get(runKey(recorder.namespace, first.runId))) as {
      calls: string[];
    };
    expect(run.calls).toHaveLength(2);
    await provider.close();
    const replayer = box.recorder("replay");
    const second = await runGraph(replayer, plannerBuilder(replayer), { task: "1.2" }, config);
    expect(second).toStrictEqual(first);
    expect(provider.calls).toBe(2);
    expect(replayer.stats.hits).toBe(2);
  });

  it("graphRunId: none without a thread, a typed error for a bad one", () => {
    expect(graphRunId(undefined)).toBeUndefined();
    expect(() => graphRunId({ configurable: { thread_id: 7 as never } })).toThrow(/thread_id/);
  });
});
