/**
 * The integrations' key scenario, run by test/compat/lowest.test.ts inside
 * the compat fixture (the lowest framework releases of the peer ranges),
 * against the built package. Plain JavaScript: it runs under bare `node`
 * from the fixture directory, so every bare import resolves to the
 * fixture's packages, never to the repository's.
 *
 *   node scenario.mjs <auto|replay>
 *   env: COMPAT_STORE (sqlite:// URL), COMPAT_PROVIDER (fake provider URL),
 *        COMPAT_AGENTS (scripted Responses API URL), COMPAT_TEMPERATURE (default 0)
 *
 * Prints one JSON line: the framework versions each integration loaded, the
 * outputs, the recorder's counters and how often the agent's tool really ran.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, Runner, setTracingDisabled } from "@openai/agents";
import { createFetch, createRecorder, withInvocation } from "invocache";
import { InvocacheCache } from "invocache/langchain";
import { InvocacheNodeCache, invocacheCachePolicy, runGraph } from "invocache/langgraph";
import { invocacheModelProvider, invocacheTool } from "invocache/openai-agents";
import OpenAI from "openai";
import { z } from "zod";

/** The version of `pkg` that a bare import from `fromUrl` loads (Node's node_modules lookup). */
function versionSeenFrom(fromUrl, pkg) {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    const manifest = join(dir, "node_modules", pkg, "package.json");
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, "utf8")).version;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

const mode = process.argv[2];
const temperature = Number(process.env.COMPAT_TEMPERATURE ?? "0");
const apiKey = "sk-compat-test";
const recorder = createRecorder({ store: process.env.COMPAT_STORE, mode, env: {} });
setTracingDisabled(true);

const versions = {
  "@langchain/core": versionSeenFrom(import.meta.resolve("invocache/langchain"), "@langchain/core"),
  "@langchain/langgraph": versionSeenFrom(
    import.meta.resolve("invocache/langgraph"),
    "@langchain/langgraph",
  ),
  "@langchain/langgraph-checkpoint": versionSeenFrom(
    import.meta.resolve("invocache/langgraph"),
    "@langchain/langgraph-checkpoint",
  ),
  "@langchain/openai": versionSeenFrom(import.meta.url, "@langchain/openai"),
  "@openai/agents": versionSeenFrom(
    import.meta.resolve("invocache/openai-agents"),
    "@openai/agents",
  ),
};

// LangChain: the cache route and the fetch route (streaming).
const base = `${process.env.COMPAT_PROVIDER}/v1`;
const cached = new ChatOpenAI({
  model: "gpt-4o-mini",
  apiKey,
  temperature,
  maxRetries: 0,
  configuration: { baseURL: base },
  cache: new InvocacheCache({ recorder }),
});
const viaCache = await withInvocation({ role: "planner", task: "release 1.2" }, () =>
  cached.invoke("Plan the release"),
);
const viaFetch = new ChatOpenAI({
  model: "gpt-4o-mini",
  apiKey,
  maxRetries: 0,
  configuration: { baseURL: base, fetch: createFetch({ recorder }) },
});
let streamed = "";
for await (const chunk of await viaFetch.stream("Stream the checklist")) {
  streamed += String(chunk.content);
}

// LangGraph: a graph run as one run scope, a node served by the node cache.
const State = Annotation.Root({
  task: Annotation(),
  plan: Annotation(),
  steps: Annotation(),
});
const graph = new StateGraph(State)
  .addNode("planner", async (s) => {
    const answer = await withInvocation({ role: "planner" }, () =>
      viaFetch.invoke(`Plan ${s.task}`),
    );
    return { plan: String(answer.content) };
  })
  .addNode("checklist", (s) => ({ steps: s.plan.split(" ").slice(0, 3) }), {
    cachePolicy: invocacheCachePolicy(),
  })
  .addEdge(START, "planner")
  .addEdge("planner", "checklist")
  .addEdge("checklist", END)
  .compile({ cache: new InvocacheNodeCache({ recorder, graph: "compat" }) });
const graphOut = await runGraph(
  recorder,
  graph,
  { task: "release 1.2" },
  { configurable: { thread_id: "compat-1" } },
);

// OpenAI Agents SDK: a handoff and a recorded tool, over the Responses API.
let toolRuns = 0;
const lookupOrder = invocacheTool(
  {
    name: "lookup_order",
    description: "Look an order up by id",
    parameters: z.object({ order: z.string() }),
    execute: async ({ order }) => {
      toolRuns++;
      return `order ${order} shipped`;
    },
  },
  { recorder, readOnlyHint: true },
);
const billing = new Agent({
  name: "Billing agent",
  instructions: "Answer billing questions; look orders up.",
  model: "gpt-5",
  tools: [lookupOrder],
});
const triage = new Agent({
  name: "Triage agent",
  instructions: "Hand billing questions to the billing agent.",
  model: "gpt-5",
  handoffs: [billing],
});
const client = new OpenAI({ apiKey, baseURL: `${process.env.COMPAT_AGENTS}/v1`, maxRetries: 0 });
const runner = new Runner({ modelProvider: invocacheModelProvider({ recorder, client }) });
const agentResult = await withInvocation({ role: "support", task: "order 42" }, () =>
  recorder.run(() => runner.run(triage, "Where is my order 42?"), { runId: "compat-support" }),
);

const { hits, recorded } = recorder.stats;
await recorder.close();
process.stdout.write(
  `${JSON.stringify({
    versions,
    langchain: [String(viaCache.content), streamed],
    langgraph: graphOut,
    agents: { output: agentResult.finalOutput, agent: agentResult.lastAgent?.name },
    toolRuns,
    stats: { hits, recorded },
  })}\n`,
);
