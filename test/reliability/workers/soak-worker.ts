/**
 * One process of the soak test. Makes `calls` recorder calls in auto mode on
 * a shared store, `lanes` at a time: a quarter of them on identities every
 * process shares (`s-<i>`, at the same positions and in the same order in
 * every process, so the processes meet on them), the rest on its own
 * (`p<worker>-<j>`, shuffled). The upstream is a loopback HTTP server that
 * counts calls per identity.
 *
 *   node --import tsx soak-worker.ts <storeUrl> <upstreamUrl> <worker> <calls> <namespace> <lanes>
 *
 * Prints "ready" once the store is open, waits for a line on stdin, then
 * prints one JSON line: every answer, every error a caller saw, every
 * warning event, the recorder's stats. Never throws: errors are data.
 */
import { createRecorder } from "../../../src/index.js";

const [storeUrl, upstreamUrl, workerText, callsText, namespace, lanesText] = process.argv.slice(2);
if (
  storeUrl === undefined ||
  upstreamUrl === undefined ||
  workerText === undefined ||
  callsText === undefined ||
  namespace === undefined ||
  lanesText === undefined
) {
  throw new Error(
    "usage: soak-worker.ts <storeUrl> <upstreamUrl> <worker> <calls> <namespace> <lanes>",
  );
}
const worker = Number(workerText);
const calls = Number(callsText);
const shared = Math.floor(calls / 4);

/** The order of this process's calls: shared ids at every 4th position, own ids shuffled between. */
function plan(): string[] {
  let seed = worker + 1;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const own = Array.from({ length: calls - shared }, (_, j) => `p${worker}-${j}`);
  for (let i = own.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [own[i], own[j]] = [own[j]!, own[i]!];
  }
  const out: string[] = [];
  let s = 0;
  for (let k = 0; k < calls; k++) {
    out.push(k % 4 === 0 && s < shared ? `s-${s++}` : own.pop()!);
  }
  return out;
}

interface Failure {
  id: string;
  name: string;
  code?: string;
  message: string;
}

const recorder = createRecorder({
  store: storeUrl,
  mode: "auto",
  namespace,
  identity: { homeDir: "/home/u", tmpDirs: ["/tmp"] },
});
const warnings: Array<{ message: string; error?: string }> = [];
recorder.on("warning", (w) =>
  warnings.push({
    message: w.message,
    ...(w.error === undefined ? {} : { error: String((w.error as Error)?.message ?? w.error) }),
  }),
);

// Open the store before the start signal, so every process starts contending at once.
await recorder.store.get(`${namespace}:warm-up`).catch(() => undefined);
process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

const ids = plan();
const answers: Record<string, string> = {};
const errors: Failure[] = [];
let next = 0;
const started = performance.now();
async function lane(): Promise<void> {
  while (next < ids.length) {
    const id = ids[next++]!;
    try {
      const out = await recorder.call(
        { role: "soak", model: "m", prompt: `call ${id}`, task: "soak" },
        async () => {
          const res = await fetch(`${upstreamUrl}/${id}`, { method: "POST" });
          if (!res.ok) throw new Error(`upstream answered ${res.status}`);
          return (await res.json()) as { answer: string };
        },
      );
      answers[id] = out.answer;
    } catch (error) {
      const e = error as { name?: string; code?: string; message?: string };
      errors.push({
        id,
        name: String(e?.name),
        ...(typeof e?.code === "string" ? { code: e.code } : {}),
        message: String(e?.message ?? error),
      });
    }
  }
}
await Promise.all(Array.from({ length: Number(lanesText) }, lane));
const ms = performance.now() - started;
await recorder.close();
process.stdout.write(
  `${JSON.stringify({ worker, ms, answers, errors, warnings, stats: recorder.stats })}\n`,
);
