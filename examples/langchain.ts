/**
 * LangChain.js through invocache, both routes: `InvocacheCache` as a chat
 * model's `cache` (LangChain's own cache interface), and `createFetch` as
 * ChatOpenAI's client fetch (covers streaming and tool calls too). Runs
 * against a local fake provider, so no key or network is needed.
 * Run: npx tsx examples/langchain.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatOpenAI } from "@langchain/openai";
import { createFetch, createRecorder, type Mode, withInvocation } from "../src/index.js";
import { InvocacheCache } from "../src/integrations/langchain.js";
import { startFakeProvider } from "../test/fake-provider/index.js";

const provider = await startFakeProvider();
const dir = await mkdtemp(join(tmpdir(), "invocache-langchain-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;

async function pipeline(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const common = {
    model: "gpt-4o-mini",
    apiKey: "sk-example-key", // goes upstream live; never in a key, never stored
    maxRetries: 0,
  };
  const cached = new ChatOpenAI({
    ...common,
    temperature: 0,
    configuration: { baseURL: `${provider.url}/v1` },
    cache: new InvocacheCache({ recorder }),
  });
  const streaming = new ChatOpenAI({
    ...common,
    configuration: { baseURL: `${provider.url}/v1`, fetch: createFetch({ recorder }) },
  });
  const out = await withInvocation({ role: "reviewer", task: "release 1.2" }, async () => {
    const review = await cached.invoke("Review the release notes");
    let checklist = "";
    for await (const chunk of await streaming.stream("Stream the checklist")) {
      checklist += String(chunk.content);
    }
    return { review: String(review.content), checklist };
  });
  const stats = { ...recorder.stats };
  await recorder.close();
  return { out, stats };
}

try {
  const first = await pipeline("auto");
  const upstream = provider.calls;
  await provider.close(); // the replay must not need it
  const second = await pipeline("replay");
  assert.deepEqual(second.out, first.out);
  assert.equal(upstream, 2);
  assert.equal(provider.calls, 2);
  assert.equal(second.stats.hits, 2);
  console.log("recorded:", first.out);
  console.log(`replayed: identical, ${second.stats.hits} hits, 0 upstream calls`);
} finally {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
}
