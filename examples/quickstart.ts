/**
 * Quickstart: record a model call once, replay it after, and see a retry
 * after a gate rejection go upstream again (RELOOP safety).
 * Run: npx tsx examples/quickstart.ts
 */
import { createRecorder, invocationIdentity, shortId } from "../src/index.js";

// Any async function can be the "model". Here: a fake one that counts calls.
let upstreamCalls = 0;
async function fakeModel(prompt: string) {
  upstreamCalls++;
  await new Promise((r) => setTimeout(r, 200)); // pretend latency
  return { text: `draft #${upstreamCalls} for: ${prompt.slice(0, 30)}` };
}

const recorder = createRecorder({ store: "sqlite://.invocache/quickstart.sqlite", mode: "auto" });
const request = {
  role: "builder",
  model: "gpt-5",
  // The checkout path and the timestamp are noise: they are templated away.
  prompt: `Write ${process.cwd()}/README.md (requested ${new Date().toISOString()})`,
  projectPath: process.cwd(),
};

console.log("identity:", shortId(invocationIdentity(request)));
for (const attempt of [0, 0, 1]) {
  const started = performance.now();
  const out = await recorder.call(request, () => fakeModel(request.prompt), { attempt });
  const hit = recorder.last?.hit ? "hit " : "miss";
  console.log(
    `attempt ${attempt}: ${hit} ${(performance.now() - started).toFixed(1).padStart(6)} ms  ${out.text}`,
  );
}
console.log("stats:", recorder.stats, "upstream calls this run:", upstreamCalls);
await recorder.close();
