/**
 * Where a replayed agent-loop turn's CPU goes, without a profiler (not a
 * bench row). The profile (agent-loop-profile.ts) names the stages but
 * inflates the replay by about half again; this takes the replay apart by
 * running its parts alone, each timed by `process.cpuUsage` (all threads:
 * SQLite's worker included), alternated round by round in one process:
 *
 * - `sdk floor`: the loop through the real `openai` SDK, whose fetch reads
 *   the body and answers each turn's bytes (the agent-loop bench's floor);
 * - `sdk replay`: the same loop replayed through `createFetch`;
 * - `createFetch`: the replay's fetch alone, called with the very requests
 *   the SDK made (captured once) and its answer read with `json()`;
 * - `identity`: what createFetch computes the key from, alone: the body's
 *   `JSON.parse`, `describeHttpCall` and `invocationIdentity`;
 * - `store hit read`: the store's `getHit` of each turn's key, alone.
 *
 * Each loop starts with the reuse cache emptied, as the bench's fresh
 * loops do. Usage:
 *   node --import tsx bench/support/agent-loop-split.ts [--store memory|sqlite|cassette]
 *     [--turns 10] [--rounds 15] [--warmup 300] [--json]
 * The bench's 10-turn replay target (≥ 0.5× the floor) needs `sdk replay`
 * ≤ 2 × `sdk floor`: with the SDK's own part unchanged, `createFetch` at
 * most the floor.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeHttpCall, VOLATILE_BODY_FIELDS } from "../../src/adapters/http-identity.js";
import { createFetch } from "../../src/adapters/index.js";
import { clearNormalizationReuse, invocationIdentity } from "../../src/identity/index.js";
import { createRecorder } from "../../src/index.js";
import { invocationCall } from "../../src/invocation/index.js";
import { agentLoop, LOOP_STORES, loopStoreOpener, MACHINE } from "./agent-loop-workload.js";
import { countOption, option } from "./args.js";

const KINDS: readonly string[] = LOOP_STORES;
const kind = option("store", "memory");
if (!KINDS.includes(kind)) {
  process.stderr.write(`--store must be one of ${KINDS.join(", ")}, got ${JSON.stringify(kind)}\n`);
  process.exit(2);
}
const turns = countOption("turns", 10);
const rounds = countOption("rounds", 15);
const warmup = countOption("warmup", 300);
/** Loops per timed sample: a 10-turn loop is a few ms, too short for one cpuUsage reading. */
const PER_SAMPLE = 20;
/** Warm-up, in whole samples' worth of loops (`--warmup` rounded up). */
const warmRounds = Math.ceil(warmup / PER_SAMPLE);

const dir = mkdtempSync(join(tmpdir(), "invocache-agent-loop-split-"));
const open = loopStoreOpener(kind, dir);

const { constant, floor, client, run } = agentLoop(turns);
// The SDK's requests, as its fetch receives them, and each turn's key.
const requests: [string, RequestInit][] = [];
const keys: string[] = [];
await run(
  client(async (input, init) => {
    requests.push([String(input), { ...init }]);
    return constant(input, init);
  }),
  false,
);
const recStore = open();
const rec = createRecorder({ store: recStore, mode: "record", identity: MACHINE, env: {} });
rec.on("record", (e) => keys.push(e.key));
await run(client(createFetch({ recorder: rec, fetch: constant })), true);
await rec.close();
if (kind !== "memory") await recStore.close();
if (keys.length !== turns) throw new Error(`split: recorded ${keys.length} calls, not ${turns}`);

const store = open();
const recorder = createRecorder({ store, mode: "replay", identity: MACHINE, env: {} });
const replayFetch = createFetch({
  recorder,
  fetch: async () => {
    throw new Error("split: the replay went upstream");
  },
});
const sdkReplay = client(replayFetch);
const sdkFloor = client(floor);
const volatile = new Set(VOLATILE_BODY_FIELDS);

const parts: Record<string, () => Promise<void>> = {
  "sdk floor": () => run(sdkFloor, false),
  "sdk replay": () => run(sdkReplay, false),
  createFetch: async () => {
    for (const [url, init] of requests) await (await replayFetch(url, init)).json();
  },
  identity: async () => {
    for (const [url, init] of requests) {
      const body = JSON.parse(init.body as string) as Record<string, unknown>;
      const [req, opts] = invocationCall(
        describeHttpCall(new URL(url), body as never, volatile, undefined),
      );
      invocationIdentity(req, { ...MACHINE, attempt: opts.attempt });
    }
  },
  "store hit read": async () => {
    for (const key of keys)
      if ((await store.getHit!(key)) === undefined) throw new Error("split: no hit");
  },
};

const cpuUs = (u: NodeJS.CpuUsage) => u.user + u.system;
const samples: Record<string, number[]> = {};
for (let round = 0; round < warmRounds + rounds; round++) {
  const names = Object.keys(parts);
  // Each part goes first in turn.
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length]!;
    const c0 = process.cpuUsage();
    for (let i = 0; i < PER_SAMPLE; i++) {
      clearNormalizationReuse();
      await parts[name]!();
    }
    const perTurn = cpuUs(process.cpuUsage(c0)) / PER_SAMPLE / turns;
    if (round >= warmRounds) {
      samples[name] ??= [];
      samples[name].push(perTurn);
    }
  }
}
await recorder.close();
if (kind !== "memory") await store.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const us = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const derived = {
  "the SDK's part of the replay (sdk replay − createFetch)": us["sdk replay"]! - us.createFetch!,
  "the hit beyond the identity (createFetch − identity)": us.createFetch! - us.identity!,
  "floor ÷ replay, as the bench's row reads it": us["sdk floor"]! / us["sdk replay"]!,
};
if (process.argv.includes("--json")) {
  process.stdout.write(
    `${JSON.stringify({ store: kind, turns, rounds, warmup: warmRounds * PER_SAMPLE, us, derived })}\n`,
  );
} else {
  console.log(
    `${kind}, ${turns} turns: CPU µs per turn, median of ${rounds} samples of ${PER_SAMPLE} loops after ${warmRounds * PER_SAMPLE} loops`,
  );
  for (const [k, v] of Object.entries(us))
    console.log(`  ${k.padEnd(56)} ${v.toFixed(0).padStart(6)}`);
  for (const [k, v] of Object.entries(derived))
    console.log(
      `  ${k.padEnd(56)} ${v < 10 ? v.toFixed(2).padStart(6) : v.toFixed(0).padStart(6)}`,
    );
}
