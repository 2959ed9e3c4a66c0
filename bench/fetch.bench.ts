/**
 * The adapter path: a `createFetch` replay of a ~166 KB chat conversation
 * (40 messages with paths, UUIDs and timestamps) beside `recorder.call`
 * replaying the same entry given the request `createFetch` builds (its
 * conversation, model and params, made once), interleaved call by call on
 * one memory store. The ratio is what the adapter adds: reading the body,
 * mapping it to that request, rebuilding the Response. The baseline cannot
 * be given the prompt text instead: a prompt is normalized as a whole, and
 * a whole-text pass over the conversation's JSON collapses the spaces the
 * string-by-string pass kept inside fenced code blocks (another identity).
 * Nothing goes upstream (replay mode; an upstream call throws).
 */
import { describeHttpCall } from "../src/adapters/http-identity.js";
import { createFetch, invocationCall, VOLATILE_BODY_FIELDS } from "../src/adapters/index.js";
import { createRecorder, invocationManifest, openStore } from "../src/index.js";
import { modelOf } from "../test/helpers/model-manifest.js";
import { buildPrompt } from "./support/prompt.js";
import type { BenchRow } from "./support/row.js";
import { compare, type RowInput } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const CALLS = 200;
const WARMUP = 20;
const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const URL_ = "http://127.0.0.1:9/v1/chat/completions";

const messages = Array.from({ length: 40 }, (_, i) => ({
  role: i % 2 === 0 ? "user" : "assistant",
  content: buildPrompt(4150, i + 1),
}));
const body = JSON.stringify({ model: "gpt-5", messages, temperature: 0 });
const answer = {
  id: "chatcmpl-1",
  object: "chat.completion",
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok" } }],
};

const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export default async function fetchBench(ctx: BenchContext): Promise<BenchRow[]> {
  const store = openStore("memory://");
  const upstream = async () =>
    new Response(JSON.stringify(answer), { headers: { "content-type": "application/json" } });
  const init = { method: "POST", headers: { "content-type": "application/json" }, body };
  // Record once through the adapter, then replay only.
  const auto = createRecorder({ store, mode: "auto", identity: machine, env: {} });
  await (await createFetch({ recorder: auto, fetch: upstream })(URL_, init)).json();
  const replay = createRecorder({ store, mode: "replay", identity: machine, env: {} });
  const f = createFetch({
    recorder: replay,
    fetch: async () => {
      throw new Error("bench: replay went upstream");
    },
  });
  // The same entry through recorder.call: the request the adapter builds, made once.
  const [plain] = invocationCall(
    describeHttpCall(new URL(URL_), JSON.parse(body), new Set(VOLATILE_BODY_FIELDS)),
  );
  if (invocationManifest(plain, machine).prompt !== modelOf(auto.last!.manifest).prompt)
    throw new Error("bench: prompt drift");

  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    for (const which of i % 2 === 0 ? [0, 1] : [1, 0]) {
      const t0 = process.hrtime.bigint();
      if (which === 0) await (await f(URL_, init)).json();
      else await replay.call(plain, async () => answer);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (i >= WARMUP) (which === 0 ? ours : base).push(ms);
    }
  }
  if (replay.stats.hits !== 2 * (WARMUP + CALLS)) throw new Error("bench: not every call hit");
  ours.sort((a, b) => a - b);
  base.sort((a, b) => a - b);
  ctx.log(
    `createFetch replay p50 ${pct(ours, 0.5).toFixed(2)} ms vs recorder.call ${pct(base, 0.5).toFixed(2)} ms`,
  );
  const row: RowInput = {
    suite: "fetch",
    measurement: `createFetch replay, ${Math.round(body.length / 1000)} KB conversation, p50`,
    unit: "ms",
    better: "lower",
    baselineName: "recorder.call replay of the same entry, given the request createFetch builds",
    // Reading a 166 KB body and building a Response: small beside the identity.
    target: 1.3,
    note: `${CALLS} interleaved calls after ${WARMUP} warmup, memory store`,
  };
  await auto.close();
  await replay.close();
  await store.close();
  return [compare(row, pct(ours, 0.5), pct(base, 0.5))];
}
