/**
 * One runner of the fleet test (test/reliability/fleet.test.ts): an
 * OpenAI-style client going through `createFetch` on a shared store, as a
 * CI runner would. Runs its plan (identity + attempt pairs) `lanes` at a
 * time, in the given mode.
 *
 *   node --import tsx fleet-worker.ts <storeUrl> <upstreamUrl> <worker> <mode> <namespace> <lanes> <leaseMs> <planA> <planB>
 *
 * `planA` / `planB`: JSON arrays of `[id, attempt]`. Prints "ready" once the
 * store is open; on the first stdin line runs plan A, then prints "a-done";
 * on the second runs plan B (the calls the test lets start only after it
 * killed a runner), then prints one JSON report line: every answer, every
 * error, and which calls saw a store warning (fail-open: such a call may go
 * upstream without single-flight). Each upstream request carries headers
 * naming the runner and whether its call had been warned, so the upstream
 * can tell the calls the guarantees cover from the fail-open ones.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createInterface } from "node:readline";
import { createFetch, createRecorder, withInvocation } from "../../../src/index.js";

const [storeUrl, upstreamUrl, worker, mode, namespace, lanesText, leaseText, planA, planB] =
  process.argv.slice(2);
if (planB === undefined) {
  throw new Error(
    "usage: fleet-worker.ts <storeUrl> <upstreamUrl> <worker> <mode> <namespace> <lanes> <leaseMs> <planA> <planB>",
  );
}

/** The call in progress in this async context, and whether the recorder warned during it. */
const current = new AsyncLocalStorage<{ key: string; warned: boolean }>();
const warned = new Set<string>();

const recorder = createRecorder({
  store: storeUrl!,
  mode: mode as "auto" | "replay",
  namespace: namespace!,
  leaseMs: Number(leaseText),
  identity: { homeDir: "/home/u", tmpDirs: ["/tmp"] },
});
recorder.on("warning", () => {
  const call = current.getStore();
  if (call === undefined) return;
  call.warned = true;
  warned.add(call.key);
});

const fetchThrough = createFetch({
  recorder,
  fetch: (input, init) => {
    const call = current.getStore();
    const headers = new Headers(init?.headers);
    headers.set("x-fleet-worker", worker!);
    headers.set("x-fleet-attempt", call?.key.split("/")[1] ?? "?");
    headers.set("x-fleet-warned", call?.warned === true ? "1" : "0");
    return fetch(input, { ...init, headers });
  },
});

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
await recorder.store.get(`${namespace}:warm-up`).catch(() => undefined);
process.stdout.write("ready\n");

const answers: Record<string, string> = {};
const errors: Array<{ key: string; message: string }> = [];

async function one(id: string, attempt: number): Promise<void> {
  const key = `${id}/${attempt}`;
  await current.run({ key, warned: false }, async () => {
    try {
      const res = await withInvocation({ role: "fleet", attempt }, () =>
        fetchThrough(`${upstreamUrl}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk-fleet" },
          body: JSON.stringify({
            model: "fleet-model",
            messages: [{ role: "user", content: `call ${id}` }],
          }),
        }),
      );
      const text = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      const body = JSON.parse(text) as { choices: Array<{ message: { content: string } }> };
      answers[key] = body.choices[0]!.message.content;
    } catch (error) {
      errors.push({ key, message: String((error as Error)?.message ?? error) });
    }
  });
}

async function run(plan: Array<[string, number]>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < plan.length) {
      const [id, attempt] = plan[next++]!;
      await one(id, attempt);
    }
  };
  await Promise.all(Array.from({ length: Number(lanesText) }, lane));
}

await lines.next();
await run(JSON.parse(planA!) as Array<[string, number]>);
process.stdout.write("a-done\n");
await lines.next();
await run(JSON.parse(planB!) as Array<[string, number]>);
await recorder.close();
process.stdout.write(`${JSON.stringify({ worker, answers, errors, warned: [...warned] })}\n`);
process.exit(0);
