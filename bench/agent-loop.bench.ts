/**
 * The agent loop (issue 32): every call re-sends the whole conversation so
 * far plus one new message. Turn t sends a system prompt and t user messages
 * (~2 KiB each) with the t − 1 assistant answers (~2 KiB each) between them,
 * through the real `openai` SDK. Two kinds of rows, per loop length:
 *
 * - identity: `invocationIdentity` of every turn's request beside
 *   `JSON.stringify` + SHA-256 of that turn's body (what any cache must at
 *   least do), summed over the loop; the note gives the ratio turn by turn
 *   (first, quarter, half, last) so a cost that grows with the number of
 *   earlier turns shows.
 * - replay: the whole loop replayed through `createFetch` on a memory,
 *   SQLite and cassette store, beside the SDK floor (the same client whose
 *   fetch reads the request body once, as any transport does, and answers
 *   each turn's bytes at once; the note gives the ratio to a fetch that
 *   never reads the body as well: see `readingBody`).
 *
 * Each round is one fresh loop: every turn's body is parsed anew (new string
 * objects, as from the wire) and anything reused across calls starts empty,
 * as in a process that runs the loop once.
 *
 * Beside them, the fixed cost: the identity of a tiny request (one
 * few-word message, as createFetch describes it) beside stringify + SHA-256
 * of its body (part `tiny`); and memory (part `rss`): the peak RSS of a
 * 1,000-turn loop's identities with the reuse cache at its default bound,
 * beside a process doing the same loop without the identities, and a
 * control doing that while holding the strings the cache keeps (three child
 * processes, bench/support/agent-loop-rss.ts; targets: the cache's live heap
 * within its bound, and the peak within 1.1× the control's).
 *
 * Sizes (for quick checks): BENCH_AGENT_TURNS=10,40 (default 10,40,100),
 * BENCH_AGENT_ROUNDS=3 (default 7), BENCH_AGENT_WARMUP_CALLS=3000 (calls run before
 * measuring, at least two loops: default 100), BENCH_AGENT_PARTS=identity,replay,tiny,rss,
 * BENCH_AGENT_STORES=memory,sqlite,cassette (and sqlite-better, the default
 * when INVOCACHE_BETTER_SQLITE3 names a better-sqlite3 build), BENCH_AGENT_RSS_TURNS=1000. `npm run bench -- agent-loop`
 * runs only this module.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { describeHttpCall, VOLATILE_BODY_FIELDS } from "../src/adapters/http-identity.js";
import { createFetch } from "../src/adapters/index.js";
import * as identityModule from "../src/identity/index.js";
import { DEFAULT_REUSE_BYTES, invocationIdentity } from "../src/identity/index.js";
import { cassetteStore, createRecorder, openStore, type Store } from "../src/index.js";
import { invocationCall } from "../src/invocation/index.js";
import {
  assistant,
  BASE_URL,
  completion,
  MACHINE,
  MODEL,
  readingBody,
  SYSTEM,
  user,
} from "./support/agent-loop-workload.js";
import { BETTER_SQLITE3_BUILD, betterSqliteStore } from "./support/better-sqlite3-store.js";
import { type SampleOptions, sampleInterleaved } from "./support/measure.js";
import { type BenchRow, compare, type RowInput } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const list = (v: string | undefined, dflt: string) =>
  (v === undefined || v === "" ? dflt : v).split(",").map((s) => s.trim());
const TURNS = list(process.env.BENCH_AGENT_TURNS, "10,40,100").map(Number);
const ROUNDS = Number(process.env.BENCH_AGENT_ROUNDS ?? 7);
const WARMUP = 2;
/** Calls run before a row measures (BENCH_AGENT_WARMUP_CALLS); see {@link warmupLoops}. */
const WARMUP_CALLS = Number(process.env.BENCH_AGENT_WARMUP_CALLS ?? 100);
if (!Number.isSafeInteger(WARMUP_CALLS) || WARMUP_CALLS < 0)
  throw new Error(
    `BENCH_AGENT_WARMUP_CALLS must be a whole number of calls, got ${process.env.BENCH_AGENT_WARMUP_CALLS}`,
  );
/**
 * Warm-up loops of the identity and replay rows: at least 2, and enough
 * that ~100 calls have run first. Two 10-turn loops (20 calls) left the
 * short rows measuring code V8 had not finished optimizing: run after the
 * 40-turn loop, the identity row read 2.42× instead of 3.18× (sixteenth
 * session); the replay rows, whose floor (the SDK alone) runs far less of
 * its own code, read the same way until they got this warm-up too
 * (seventeenth session). More (BENCH_AGENT_WARMUP_CALLS=3000) moves the
 * 10-turn rows' absolute figures with the machine's state, not their
 * ratios (twentieth session: 1.79 / 0.41× at 100, 1.81 / 0.40× at 3,000).
 */
const warmupLoops = (turns: number) => Math.max(WARMUP, Math.ceil(WARMUP_CALLS / turns));
const PARTS = list(process.env.BENCH_AGENT_PARTS, "identity,replay,tiny,rss");
const RSS_TURNS = Number(process.env.BENCH_AGENT_RSS_TURNS ?? 1000);
const STORES = list(
  process.env.BENCH_AGENT_STORES,
  BETTER_SQLITE3_BUILD === undefined
    ? "memory,sqlite,cassette"
    : "memory,sqlite,sqlite-better,cassette",
);

const CHAT_URL = new URL(`${BASE_URL}/chat/completions`);

type Message = { role: "system" | "user" | "assistant"; content: string };

/** The messages turn t (1-based) sends. */
function messagesOf(t: number): Message[] {
  const out: Message[] = [{ role: "system", content: SYSTEM }];
  for (let k = 1; k <= t; k++) {
    out.push({ role: "user", content: user(k) });
    if (k < t) out.push({ role: "assistant", content: assistant(k) });
  }
  return out;
}

/** Forget what identities reuse across calls, when this build has such a cache. */
function freshProcessState(): void {
  const clear = (identityModule as Record<string, unknown>).clearNormalizationReuse;
  if (typeof clear === "function") (clear as () => void)();
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const nowNs = () => process.hrtime.bigint();

/** The identity row's target: × JSON.stringify + SHA-256 of each turn's body. */
const IDENTITY_TARGET = 1.5;

/**
 * Each identity row's per-loop figures (ms), by turns: the replay rows of the
 * same run read them to say what their ratio could reach at most (see
 * `ceilingNote`).
 */
const identityPerLoop = new Map<number, { ours: number; base: number }>();

/**
 * What a replay row's ratio could reach at most, from this run's own
 * figures: a replayed turn costs at least the floor's turn plus the turn's
 * identity, so with a hit that cost nothing the ratio is floor / (floor +
 * identity); with the identity exactly at its own row's target (1.5×
 * stringify + SHA-256), floor / (floor + 1.5 × that baseline). Both are
 * this run's: at 10 turns they moved 0.30–0.70× and 0.37–0.80× over four
 * runs (docs/performance.md, "Nineteenth session"), so one run's ceiling
 * bounds that run's row, not the target.
 */
function ceilingNote(turns: number, floorMs: number): string {
  const id = identityPerLoop.get(turns);
  if (id === undefined) return "";
  const atMeasured = floorMs / (floorMs + id.ours);
  const atTarget = floorMs / (floorMs + IDENTITY_TARGET * id.base);
  return `; at most ${atMeasured.toFixed(2)}× with this run's identity (${id.ours.toFixed(1)} ms/loop) and a hit costing nothing, ${atTarget.toFixed(2)}× with the identity at its target`;
}

/** Identity of each turn vs stringify + SHA-256 of its body, summed over one loop. */
function identityRow(turns: number, ctx: BenchContext): BenchRow {
  const bodies = Array.from({ length: turns }, (_, i) =>
    JSON.stringify({ model: MODEL, messages: messagesOf(i + 1), temperature: 0 }),
  );
  const volatile = new Set(VOLATILE_BODY_FIELDS);
  // Per turn, per round: ns of each side.
  const ours: number[][] = bodies.map(() => []);
  const base: number[][] = bodies.map(() => []);
  let sink = "";
  const warmup = warmupLoops(turns);
  for (let round = 0; round < warmup + ROUNDS; round++) {
    freshProcessState();
    for (let t = 0; t < turns; t++) {
      const parsed = JSON.parse(bodies[t]!) as Record<string, unknown>;
      const [req, opts] = invocationCall(
        describeHttpCall(CHAT_URL, parsed as never, volatile, undefined),
      );
      const idOpts = { ...MACHINE, attempt: opts.attempt };
      // Alternate which side goes first (the second may find the strings' hashes cached).
      for (const which of (round + t) % 2 === 0 ? [0, 1] : [1, 0]) {
        const t0 = nowNs();
        sink =
          which === 0
            ? invocationIdentity(req, idOpts)
            : createHash("sha256").update(JSON.stringify(parsed), "utf8").digest("hex");
        const ns = Number(nowNs() - t0);
        if (round >= warmup) (which === 0 ? ours : base)[t]!.push(ns);
      }
    }
  }
  if (sink.length !== 64) throw new Error("bench: no digest");
  const perTurnOurs = ours.map(median);
  const perTurnBase = base.map(median);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const at = [0, Math.floor(turns / 4), Math.floor(turns / 2), turns - 1];
  const perTurn = at
    .map(
      (i) =>
        `turn ${i + 1}: ${(perTurnOurs[i]! / 1e3).toFixed(0)} vs ${(perTurnBase[i]! / 1e3).toFixed(0)} µs (${(perTurnOurs[i]! / perTurnBase[i]!).toFixed(2)}×)`,
    )
    .join("; ");
  ctx.log(`agent loop ${turns} turns, identity per turn: ${perTurn}`);
  const kib = Math.round(bodies[turns - 1]!.length / 1024);
  identityPerLoop.set(turns, { ours: sum(perTurnOurs) / 1e6, base: sum(perTurnBase) / 1e6 });
  return compare(
    {
      suite: "agent-loop",
      measurement: `agent loop, ${turns} turns (last body ${kib} KiB): identity of every turn, per loop`,
      unit: "ms",
      better: "lower",
      baselineName: "JSON.stringify + node:crypto SHA-256 of each turn's body",
      target: IDENTITY_TARGET,
      note: `per turn (median of ${ROUNDS} fresh loops after ${warmup}): ${perTurn}`,
    },
    sum(perTurnOurs) / 1e6,
    sum(perTurnBase) / 1e6,
  );
}

interface StoreKind {
  name: string;
  /** A store for recording, then one for replaying what it recorded. */
  open(dir: string, mode: "record" | "replay"): Store;
  /** Close after replay (memory: kept until the end). */
  close(store: Store): Promise<void>;
}

function storeKinds(): StoreKind[] {
  let memory: Store | undefined;
  const kinds: Record<string, StoreKind> = {
    memory: {
      name: "memory",
      open: () => {
        memory ??= openStore("memory://");
        return memory;
      },
      close: async () => {},
    },
    sqlite: {
      name: "SQLite",
      open: (dir) => openStore(`sqlite://${join(dir, "loop.sqlite")}`),
      close: (s) => s.close(),
    },
    // Reads on the main thread: no thread-pool hop per hit (the SQLite row's gap to memory).
    "sqlite-better": {
      name: "SQLite (better-sqlite3)",
      open: (dir) => {
        if (BETTER_SQLITE3_BUILD === undefined)
          throw new Error("BENCH_AGENT_STORES: sqlite-better needs INVOCACHE_BETTER_SQLITE3");
        return betterSqliteStore(join(dir, "loop-better.sqlite"));
      },
      close: (s) => s.close(),
    },
    cassette: {
      name: "cassette",
      open: (dir) =>
        cassetteStore(join(dir, "loop.yaml"), {
          write: "on-close",
          parseCache: join(dir, "parse-cache"),
        }),
      close: (s) => s.close(),
    },
  };
  return STORES.map((s) => {
    const k = kinds[s];
    if (k === undefined) throw new Error(`BENCH_AGENT_STORES: no store "${s}"`);
    return k;
  });
}

/** One loop through `openai`: turn t sends messagesOf(t); `onTurn` learns the turn first. */
async function runLoop(
  openai: OpenAI,
  turns: number,
  onTurn: (t: number) => void,
  check: boolean,
): Promise<void> {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "system", content: SYSTEM }];
  for (let t = 1; t <= turns; t++) {
    onTurn(t);
    messages.push({ role: "user", content: user(t) });
    const c = await openai.chat.completions.create({ model: MODEL, messages, temperature: 0 });
    const content = c.choices[0]?.message.content ?? "";
    if (check && content !== assistant(t)) throw new Error(`bench: turn ${t} answered wrong`);
    messages.push({ role: "assistant", content });
  }
}

const client = (fetch: typeof globalThis.fetch) =>
  new OpenAI({ apiKey: "sk-bench-not-a-secret", baseURL: BASE_URL, maxRetries: 0, fetch });

async function replayRows(turns: number, ctx: BenchContext): Promise<BenchRow[]> {
  const answers = Array.from({ length: turns + 1 }, (_, t) => (t === 0 ? "" : completion(t)));
  let turn = 0;
  // The recording upstream and the floor that never reads its request: each turn's bytes, at once.
  const constant: typeof fetch = async () =>
    new Response(answers[turn]!, { status: 200, headers: { "content-type": "application/json" } });
  const floorClient = client(readingBody(constant));
  const blindFloorClient = client(constant);
  const rows: BenchRow[] = [];
  for (const kind of storeKinds()) {
    const dir = mkdtempSync(join(tmpdir(), "invocache-agent-loop-"));
    try {
      const recStore = kind.open(dir, "record");
      const rec = createRecorder({ store: recStore, mode: "record", identity: MACHINE, env: {} });
      await runLoop(
        client(createFetch({ recorder: rec, fetch: constant })),
        turns,
        (t) => {
          turn = t;
        },
        true,
      );
      await rec.close();
      if (kind.name !== "memory") await recStore.close();
      const store = kind.open(dir, "replay");
      const recorder = createRecorder({ store, mode: "replay", identity: MACHINE, env: {} });
      const replayClient = client(
        createFetch({
          recorder,
          fetch: async () => {
            throw new Error("bench: replay went upstream");
          },
        }),
      );
      // ms per loop: the replay, the floor, the floor whose fetch never reads the body.
      const samples: [number[], number[], number[]] = [[], [], []];
      const warmup = warmupLoops(turns);
      for (let round = 0; round < warmup + ROUNDS; round++) {
        // Each of the three goes first, second and third in turn.
        for (let k = 0; k < 3; k++) {
          const which = (round + k) % 3;
          freshProcessState();
          const t0 = nowNs();
          if (which === 0) await runLoop(replayClient, turns, () => {}, round === 0);
          else
            await runLoop(
              which === 1 ? floorClient : blindFloorClient,
              turns,
              (t) => {
                turn = t;
              },
              false,
            );
          const ms = Number(nowNs() - t0) / 1e6;
          if (round >= warmup) samples[which]!.push(ms);
        }
      }
      const [ours, floor, blindFloor] = samples;
      if (recorder.stats.hits !== turns * (warmup + ROUNDS))
        throw new Error(`bench: ${kind.name}: not every replayed call hit`);
      await recorder.close();
      await kind.close(store);
      const o = median(ours);
      const f = median(floor);
      const b = median(blindFloor);
      ctx.log(
        `agent loop ${turns} turns, ${kind.name}: replay ${o.toFixed(1)} ms/loop, SDK floor ${f.toFixed(1)} ms/loop (never reading the body: ${b.toFixed(1)} ms/loop)`,
      );
      const row: RowInput = {
        suite: "agent-loop",
        measurement: `agent loop, ${turns} turns: replay via the openai SDK, ${kind.name} store`,
        unit: "turns/s",
        better: "higher",
        baselineName:
          "the SDK floor (same client, fetch reading the request body once and answering each turn's bytes at once)",
        target: 0.5,
        note: `whole loop per sample (${o.toFixed(1)} vs ${f.toFixed(1)} ms); against a fetch that never reads the body ${(b / o).toFixed(2)}× (${b.toFixed(1)} ms); median of ${ROUNDS} interleaved fresh loops after ${warmup}${ceilingNote(turns, f)}`,
      };
      rows.push(compare(row, (turns * 1e3) / o, (turns * 1e3) / f));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

/** The identity of a tiny request vs stringify + SHA-256 of its body. */
async function tinyRow(ctx: BenchContext): Promise<BenchRow> {
  const body = JSON.stringify({
    model: MODEL,
    messages: [{ role: "user", content: "Say hello in three words." }],
    temperature: 0,
  });
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const [req, opts] = invocationCall(
    describeHttpCall(CHAT_URL, parsed as never, new Set(VOLATILE_BODY_FIELDS), undefined),
  );
  const idOpts = { ...MACHINE, attempt: opts.attempt };
  const sampling: SampleOptions = { rounds: Math.max(ROUNDS * 3, 9), warmup: 4, minSampleMs: 30 };
  const [a, b] = await sampleInterleaved(
    [
      { name: "invocationIdentity", run: () => invocationIdentity(req, idOpts) },
      {
        name: "stringify+sha256",
        run: () => createHash("sha256").update(JSON.stringify(parsed), "utf8").digest("hex"),
      },
    ],
    sampling,
  );
  ctx.log(
    `tiny request: identity ${(a!.medianNs / 1e3).toFixed(1)} µs vs stringify+sha256 ${(b!.medianNs / 1e3).toFixed(1)} µs`,
  );
  return compare(
    {
      suite: "agent-loop",
      measurement: `identity of a tiny request (${body.length} B body, via createFetch's request)`,
      unit: "µs/call",
      better: "lower",
      baselineName: "JSON.stringify + node:crypto SHA-256 of its body",
      target: 3,
      note: `median of ${sampling.rounds} interleaved samples after ${sampling.warmup} warmup`,
    },
    a!.medianNs / 1e3,
    b!.medianNs / 1e3,
    { invocache: a!.spread, baseline: b!.spread },
  );
}

/** One child of the memory row: its peak RSS (MiB), what the reuse cache held (its count), and the live heap it held. */
function rssChild(
  mode: "identity" | "baseline" | "held",
  nodeFlags: readonly string[] = [],
): {
  peakMiB: number;
  reuseBytes: number;
  reuseEntries: number;
  heldBytes: number;
} {
  const script = join(dirname(fileURLToPath(import.meta.url)), "support", "agent-loop-rss.ts");
  const r = spawnSync(
    process.execPath,
    [...nodeFlags, "--import", "tsx", script, mode, String(RSS_TURNS), String(DEFAULT_REUSE_BYTES)],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`bench: agent-loop-rss ${mode} failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as {
    peakRssKiB: number;
    reuseBytes: number;
    reuseEntries: number;
    heldBytes: number;
  };
  return {
    peakMiB: out.peakRssKiB / 1024,
    reuseBytes: out.reuseBytes,
    reuseEntries: out.reuseEntries,
    heldBytes: out.heldBytes,
  };
}

/**
 * V8 sizes its young generation by the allocation rate it sees: a loop
 * that computes identities allocates faster than one that only hashes, so
 * V8 grows its semi-spaces (up to 16 MiB each) in the first child and not
 * in the second. At 100 turns that is most of the difference (~30 MiB with
 * the cache holding 2.3 MiB; 3–15 MiB with the young generation pinned at
 * 1 MiB in both). At 1,000 turns it is not: bodies of ~4 MB go to V8's
 * large-object space, and the difference is the same pinned or not. Both
 * rows are printed so the two effects can be told apart.
 */
const PINNED_YOUNG_GENERATION = ["--max-semi-space-size=1"] as const;

/**
 * The reuse cache's memory on a long loop, as two rows (a child process
 * each side, bench/support/agent-loop-rss.ts):
 *
 * - **What the bound promises**: the live heap the cache holds at the end
 *   (after full collections, with it against emptied) within
 *   `maxBytes` — the bound is on heap bytes (docs/identity.md).
 * - **Peak RSS against any holder of the same data**: the loop's identities
 *   beside the control, the same loop without identities holding the
 *   strings the cache keeps in a plain array. V8 grows its old generation to
 *   a multiple of what is live between full collections, so any data of the
 *   cache's size raises a process's peak by more than its size (on this loop
 *   two to three times, measured since the twelfth session); what the
 *   identities may not do is cost more than holding that data does.
 *
 * The peak of the loop with neither (the plain baseline) is printed beside
 * them. An earlier row held the peak within the baseline's plus the bound,
 * which no cache holding this loop's strings can meet (docs/performance.md,
 * "Tiny identity and the reuse cache's bound").
 */
function rssRows(ctx: BenchContext, nodeFlags: readonly string[] = []): BenchRow[] {
  const base = rssChild("baseline", nodeFlags);
  const held = rssChild("held", nodeFlags);
  const ours = rssChild("identity", nodeFlags);
  const boundBytes = DEFAULT_REUSE_BYTES;
  const boundMiB = boundBytes / 2 ** 20;
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const flags =
    nodeFlags.length === 0 ? "default V8 flags" : `both children ${nodeFlags.join(" ")}`;
  const pinned = nodeFlags.length === 0 ? "" : `, young generation pinned (${nodeFlags.join(" ")})`;
  ctx.log(
    `agent loop ${RSS_TURNS} turns, peak RSS (${flags}): identities ${ours.peakMiB.toFixed(0)} MiB, without ${base.peakMiB.toFixed(0)} MiB, without but holding the cache's strings ${held.peakMiB.toFixed(0)} MiB (reuse cache ${mib(ours.reuseBytes)} MiB by its count, ${mib(ours.heldBytes)} MiB of live heap, ${ours.reuseEntries} strings; the control's strings ${mib(held.heldBytes)} MiB of live heap; bound ${boundMiB} MiB)`,
  );
  const rows: BenchRow[] = [];
  if (nodeFlags.length === 0)
    rows.push(
      compare(
        {
          suite: "agent-loop",
          measurement: `agent loop, ${RSS_TURNS} turns: live heap the reuse cache holds, against its default bound`,
          unit: "MiB",
          better: "lower",
          baselineName: `the bound (maxBytes, ${boundMiB} MiB)`,
          target: 1,
          note: `the cache's own count ${mib(ours.reuseBytes)} MiB in ${ours.reuseEntries} strings; live heap measured after full collections, the cache full against emptied`,
        },
        ours.heldBytes / 2 ** 20,
        boundMiB,
      ),
    );
  rows.push(
    compare(
      {
        suite: "agent-loop",
        measurement: `agent loop, ${RSS_TURNS} turns: peak RSS with the reuse cache at its default bound${pinned}`,
        unit: "MiB",
        better: "lower",
        baselineName: "the same loop without identities, holding the cache's strings",
        target: 1.1,
        note: `the same loop with neither identities nor the strings peaked at ${base.peakMiB.toFixed(0)} MiB; the control's strings ${mib(held.heldBytes)} MiB live, the cache's ${mib(ours.heldBytes)} MiB; ${flags}; peak RSS moves ±15 MiB from run to run`,
      },
      ours.peakMiB,
      held.peakMiB,
    ),
  );
  return rows;
}

export default async function agentLoopBench(ctx: BenchContext): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  if (PARTS.includes("identity")) for (const n of TURNS) rows.push(identityRow(n, ctx));
  if (PARTS.includes("replay")) for (const n of TURNS) rows.push(...(await replayRows(n, ctx)));
  if (PARTS.includes("tiny")) rows.push(await tinyRow(ctx));
  if (PARTS.includes("rss")) {
    rows.push(...rssRows(ctx));
    rows.push(...rssRows(ctx, PINNED_YOUNG_GENERATION));
  }
  return rows;
}
