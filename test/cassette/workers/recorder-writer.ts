/**
 * One of two processes recording into the same cassette at once. Records its
 * own prompts plus a shared set (both processes call those: cross-process
 * single-flight through the cassette's leases). Waits for "go" on stdin so
 * both start together. Prints a JSON summary.
 */
import { cassetteStore } from "../../../src/cassette/index.js";
import { createRecorder } from "../../../src/index.js";

const [path, worker, countText, sharedText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];
const count = Number(countText);
const shared = Number(sharedText);

process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));

const store = cassetteStore(path, { parseCache: false });
const recorder = createRecorder({
  store,
  mode: "auto",
  leaseMs: 5_000,
  identity: { homeDir: "/home/u", tmpDirs: ["/tmp"] },
});
const warnings: string[] = [];
recorder.on("warning", (w) => warnings.push(w.message));
let upstream = 0;
const prompts = [
  ...Array.from({ length: count }, (_, i) => `worker ${worker} task ${i}`),
  ...Array.from({ length: shared }, (_, i) => `shared task ${i}`),
];
// Interleave: shared prompts in different orders in the two processes.
if (worker === "1") prompts.reverse();
await Promise.all(
  Array.from({ length: 4 }, async (_, lane) => {
    for (let i = lane; i < prompts.length; i += 4) {
      await recorder.call({ role: "worker", model: "m", prompt: prompts[i]! }, async () => {
        upstream++;
        return { answer: `${prompts[i]} by ${worker}` };
      });
    }
  }),
);
await recorder.close();
await store.close();
process.stdout.write(JSON.stringify({ upstream, warnings }));
