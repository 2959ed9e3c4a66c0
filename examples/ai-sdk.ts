/**
 * The Vercel AI SDK through invocache: wrap the model with
 * `invocacheMiddleware({ recorder })`; generateText and streamText are
 * recorded once and replayed after (stream parts in order, Dates restored).
 * Run: npx tsx examples/ai-sdk.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText, wrapLanguageModel } from "ai";
import { invocacheMiddleware, withInvocation } from "../src/adapters/index.js";
import { createRecorder, type Mode } from "../src/index.js";
import { startFakeProvider } from "../test/fake-provider/index.js";

const provider = await startFakeProvider();
const dir = await mkdtemp(join(tmpdir(), "invocache-ai-sdk-example-"));
const store = `sqlite://${join(dir, "cache.sqlite")}`;

async function pipeline(mode: Mode) {
  const recorder = createRecorder({ store, mode });
  const vendor = createOpenAICompatible({
    name: "fake",
    baseURL: `${provider.url}/v1`,
    apiKey: "sk-example-key",
  });
  const model = wrapLanguageModel({
    model: vendor.chatModel("fake-chat"),
    middleware: invocacheMiddleware({ recorder }),
  });
  const out = await withInvocation({ role: "writer", attempt: 0 }, async () => {
    const notes = await generateText({ model, prompt: "Draft release notes", temperature: 0 });
    const stream = streamText({ model, prompt: "Stream a haiku about caches" });
    const deltas: string[] = [];
    for await (const delta of stream.textStream) deltas.push(delta);
    return {
      notes: notes.text,
      respondedAt: notes.response.timestamp.toISOString(),
      deltas,
    };
  });
  const stats = { ...recorder.stats };
  await recorder.close();
  return { out, stats };
}

try {
  const first = await pipeline("auto");
  await provider.close();
  const second = await pipeline("replay");

  assert.deepEqual(second.out, first.out);
  assert.equal(provider.calls, 2);
  assert.equal(second.stats.hits, 2);
  console.log("recorded:", first.out.notes, `| ${first.out.deltas.length} stream deltas`);
  console.log(`replayed: identical, ${second.stats.hits} hits, 0 upstream calls`);
} finally {
  await provider.close();
  await rm(dir, { recursive: true, force: true });
}
