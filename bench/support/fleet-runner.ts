/**
 * One runner process of bench/fleet.ts: a recorder on a shared store making
 * `calls` calls one after another (a CI runner's agent loop is sequential),
 * either hits (replay of the seeded identities, round robin from its own
 * offset) or recordings (auto, identities of its own). The upstream is an
 * in-process function: what is measured is the store under the fleet.
 *
 *   node --import tsx bench/support/fleet-runner.ts <storeUrl> <hit|record> <runner> <calls> <seeded> [tag]
 *
 * `tag` sets recordings of one round apart from another's.
 *
 * Prints "ready" once the store is open, waits for a line on stdin, then
 * prints one JSON line: `{ ms, latencies }` (each call's wall time, ms).
 */
import { createInterface } from "node:readline";
import { createRecorder } from "../../src/index.js";
import { machine, req, response } from "./hit-request.js";

const [storeUrl, kind, runnerText, callsText, seededText, tag = ""] = process.argv.slice(2);
if (seededText === undefined) {
  throw new Error("usage: fleet-runner.ts <storeUrl> <hit|record> <runner> <calls> <seeded>");
}
const runner = Number(runnerText);
const calls = Number(callsText);
const seeded = Number(seededText);
const recorder = createRecorder({
  store: storeUrl!,
  mode: kind === "hit" ? "replay" : "auto",
  namespace: "fleet",
  identity: machine,
});
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
await recorder.store.get("fleet:warm-up").catch(() => undefined);
// One call first: the connection and the code paths are warm before the clock starts.
await recorder.call({ ...req, prompt: `${req.prompt} seed 0` }, async () => response);
process.stdout.write("ready\n");
await lines.next();

const latencies: number[] = [];
const started = performance.now();
for (let i = 0; i < calls; i++) {
  const prompt =
    kind === "hit"
      ? `${req.prompt} seed ${(runner * 7 + i) % seeded}`
      : `${req.prompt} round ${tag} runner ${runner} call ${i}`;
  const t = performance.now();
  await recorder.call({ ...req, prompt }, async () => response);
  latencies.push(performance.now() - t);
}
const ms = performance.now() - started;
await recorder.close();
process.stdout.write(`${JSON.stringify({ ms, latencies })}\n`);
process.exit(0);
