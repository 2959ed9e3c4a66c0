/**
 * Where a replayed agent loop's time goes (not a bench row): the
 * agent-loop bench's workload (bench/agent-loop.bench.ts) recorded on one
 * store, then replayed `rounds` fresh loops through the real openai SDK
 * and `createFetch`, interleaved with the SDK floor, under a CPU profile
 * of the timed loops only:
 *   node --import tsx bench/support/agent-loop-profile.ts [memory|sqlite|cassette] [turns] [rounds] [out.cpuprofile | none]
 * Prints CPU time per loop of each (process.cpuUsage) and the replay's
 * samples by stage (the first stage found walking each sample's stack from
 * its leaf), in µs per turn; only ratios mean anything on a shared machine.
 * `none`: no profile, only the CPU times (the profiler slows the replay,
 * not the floor: ratios are taken without it).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFetch } from "../../src/adapters/index.js";
import * as identityModule from "../../src/identity/index.js";
import { createRecorder } from "../../src/index.js";
import { agentLoop, loopStoreOpener, MACHINE } from "./agent-loop-workload.js";

const kind = process.argv[2] ?? "memory";
const turns = Number(process.argv[3] ?? 40);
const rounds = Number(process.argv[4] ?? 10);
const out = process.argv[5];
const profiling = out !== "none";
const { constant, floor: floorFetch, client, run: loop } = agentLoop(turns);

const dir = mkdtempSync(join(tmpdir(), "invocache-agent-loop-profile-"));
const open = loopStoreOpener(kind, dir);

const recStore = open();
const rec = createRecorder({ store: recStore, mode: "record", identity: MACHINE, env: {} });
await loop(client(createFetch({ recorder: rec, fetch: constant })), false);
await rec.close();
if (kind !== "memory") await recStore.close();
const store = open();
const recorder = createRecorder({ store, mode: "replay", identity: MACHINE, env: {} });
const replay = client(
  createFetch({
    recorder,
    fetch: async () => {
      throw new Error("replay went upstream");
    },
  }),
);
const floor = client(floorFetch);
const fresh = () =>
  (
    (identityModule as Record<string, unknown>).clearNormalizationReuse as (() => void) | undefined
  )?.();

// Warm up both, checking every answer once.
for (let i = 0; i < 2; i++) {
  fresh();
  await loop(replay, i === 0);
  await loop(floor, false);
}

const inspector = new Session();
inspector.connect();
await inspector.post("Profiler.enable");
await inspector.post("Profiler.setSamplingInterval", { interval: 100 });
const cpu = { replay: [] as number[], floor: [] as number[] };
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e3;
let profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] } | undefined;
const sampled: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }[] = [];
for (let r = 0; r < rounds; r++) {
  for (const which of r % 2 === 0 ? ["replay", "floor"] : ["floor", "replay"]) {
    fresh();
    if (profiling && which === "replay") await inspector.post("Profiler.start");
    const c0 = process.cpuUsage();
    await loop(which === "replay" ? replay : floor, false);
    cpu[which as "replay" | "floor"].push(cpuMs(process.cpuUsage(c0)));
    if (profiling && which === "replay") {
      const got = (await inspector.post("Profiler.stop")) as { profile: typeof profile };
      sampled.push(got.profile!);
    }
  }
}
profile = sampled[0];
if (out !== undefined && profiling && profile !== undefined)
  writeFileSync(out, JSON.stringify(profile));
await recorder.close();
if (kind !== "memory") await store.close();
rmSync(dir, { recursive: true, force: true });

const EXCLUDED = "(the profiler stopping)";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/**
 * Stages, matched from a sample's leaf toward its root: the first frame
 * that names one decides (so a JSON.parse inside readJsonPost is the body
 * parse, a SHA-256 inside the identity is the identity).
 */
const STAGES: [string, (f: ProfileNode["callFrame"]) => boolean][] = [
  // The profiler's own stop, sampled before it stops: not the loop's.
  [EXCLUDED, (f) => f.url === "node:inspector"],
  ["createFetch: parse the request body", (f) => f.functionName === "readJsonPost"],
  ["createFetch: describe the call", (f) => f.functionName === "describeHttpCall"],
  [
    "identity (manifest + hash)",
    (f) => f.url.includes("/src/identity/") || f.url.includes("/src/normalize/"),
  ],
  ["store read (getHit)", (f) => f.url.includes("/src/store/") || f.url.includes("/src/cassette/")],
  ["accounting (usage, cost, call event)", (f) => /\/src\/(usage|observability)\//.test(f.url)],
  ["accounting (usage, cost, call event)", (f) => f.functionName === "endCall"],
  [
    "hit: checks, answer",
    (f) => f.functionName === "lookup" || f.functionName === "hit" || f.functionName === "hitFrom",
  ],
  ["recorder: call, run scope", (f) => f.url.includes("/src/recorder/")],
  [
    "createFetch: the Response",
    (f) => f.functionName === "toResponse" || f.functionName === "init200",
  ],
  ["createFetch: other", (f) => f.url.includes("/src/adapters/")],
  ["openai SDK", (f) => f.url.includes("node_modules/openai")],
  ["keyv / sqlite3", (f) => /node_modules\/(keyv|@keyv|sqlite3)/.test(f.url)],
  ["garbage collection", (f) => f.functionName === "(garbage collector)"],
  ["idle", (f) => f.functionName === "(idle)"],
];

const us: Record<string, number> = {};
for (const p of sampled) {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stageOf = new Map<number, string>();
  const stage = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    let s = "other (node: Response, streams, promises)";
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      const hit = STAGES.find(([, test]) => test(f));
      if (hit !== undefined) {
        s = hit[0];
        break;
      }
    }
    stageOf.set(id, s);
    return s;
  };
  for (let i = 0; i < p.samples.length; i++) {
    const s = stage(p.samples[i]!);
    if (s === EXCLUDED) continue;
    us[s] = (us[s] ?? 0) + (p.timeDeltas[i] ?? 0);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const perTurn = (x: number) => x / rounds / turns;
const total = Object.values(us).reduce((a, b) => a + b, 0);
console.log(
  `${kind}, ${turns} turns, ${rounds} rounds: CPU per loop replay ${median(cpu.replay).toFixed(1)} ms, floor ${median(cpu.floor).toFixed(1)} ms (${(median(cpu.floor) / median(cpu.replay)).toFixed(2)}×); profiled ${(perTurn(total) / 1e3).toFixed(2)} ms per turn`,
);
for (const [name, t] of Object.entries(us).sort((a, b) => b[1] - a[1])) {
  console.log(
    `  ${name.padEnd(44)} ${perTurn(t).toFixed(0).padStart(6)} µs/turn ${((100 * t) / total).toFixed(1).padStart(5)} %`,
  );
}
