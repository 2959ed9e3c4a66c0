/**
 * The OpenAI SDK through invocache: pass `createFetch({ recorder })` as the
 * client's `fetch`, say which step is calling with `withInvocation`, and
 * every chat/Responses call (streamed or not) is recorded once and replayed
 * after. Runs against a local fake provider, so no key or network is needed.
 * Run: npx tsx examples/openai-sdk.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { createFetch, withInvocation } from "../src/adapters/index.js";
import { createRecorder, type Mode } from "../src/index.js";
import { startFakeProvider } from "../test/fake-provider/index.js";

const provider = await startFakeProvider();
const dir = await mkdtemp(join(tmpdir(), "invocache-openai-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;

async function pipeline(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const openai = new OpenAI({
    apiKey: "sk-example-key", // goes upstream live; never stored
    baseURL: `${provider.url}/v1`,
    fetch: createFetch({ recorder }),
    maxRetries: 0, // the example wants one request per call; a replay miss is a 404 anyway (never retried)
  });
  const out = await withInvocation({ role: "planner", task: "release 1.2" }, async () => {
    const plan = await openai.chat.completions.create({
      model: "gpt-5",
      messages: [{ role: "user", content: "Plan the release" }],
      temperature: 0,
    });
    let streamed = "";
    const stream = await openai.chat.completions.create({
      model: "gpt-5",
      messages: [{ role: "user", content: "Stream the checklist" }],
      stream: true,
    });
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
    const summary = await openai.responses.create({ model: "gpt-5", input: "Summarize it" });
    return {
      plan: plan.choices[0]?.message.content,
      streamed,
      summary: summary.output_text,
    };
  });
  const stats = { ...recorder.stats };
  await recorder.close();
  return { out, stats };
}

try {
  const first = await pipeline("auto");
  const upstreamAfterRecording = provider.calls;
  await provider.close(); // the replay must not need it
  const second = await pipeline("replay");

  assert.deepEqual(second.out, first.out);
  assert.equal(upstreamAfterRecording, 3);
  assert.equal(provider.calls, 3);
  assert.equal(second.stats.hits, 3);
  console.log("recorded:", first.out);
  console.log(`replayed: identical, ${second.stats.hits} hits, 0 upstream calls`);
} finally {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
}
