/**
 * Two trees replaying the agent loop in one process (not a bench row): the
 * loop recorded on one store per tree, then replayed by each tree's
 * `createFetch` and the SDK floor, in turn and in alternating order, CPU
 * time per loop (process.cpuUsage). On a shared machine this says more than
 * two bench runs minutes apart: the three sides see the same load.
 *   node --import tsx bench/support/agent-loop-ab.ts <base tree> [memory|sqlite|cassette] [turns] [rounds]
 * (the base tree: a checkout with its node_modules, e.g. `git worktree add`).
 * Prints medians and minimums of each side, the floor's fraction of each,
 * and the median of new ÷ base round by round.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type OpenAI from "openai";
import { agentLoop, MACHINE } from "./agent-loop-workload.js";

const baseTree = process.argv[2];
if (baseTree === undefined)
  throw new Error("usage: agent-loop-ab.ts <base tree> [store] [turns] [rounds]");
const kind = process.argv[3] ?? "memory";
const turns = Number(process.argv[4] ?? 40);
const rounds = Number(process.argv[5] ?? 10);
const here = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { constant, floor: floorFetch, client, run } = agentLoop(turns);

interface Side {
  name: string;
  client: OpenAI;
  /** Forget what identities reuse across calls (a fresh process's state). */
  fresh: () => void;
  close: () => Promise<void>;
}

async function side(name: string, tree: string): Promise<Side> {
  const m = await import(join(tree, "src/index.ts"));
  const a = await import(join(tree, "src/adapters/index.ts"));
  const id = await import(join(tree, "src/identity/index.ts"));
  const dir = mkdtempSync(join(tmpdir(), "invocache-agent-loop-ab-"));
  let memory: unknown;
  const open = () => {
    if (kind === "memory") {
      memory ??= m.openStore("memory://");
      return memory;
    }
    if (kind === "sqlite") return m.openStore(`sqlite://${join(dir, "loop.sqlite")}`);
    return m.cassetteStore(join(dir, "loop.yaml"), {
      write: "on-close",
      parseCache: join(dir, "parse-cache"),
    });
  };
  const recStore = open();
  const rec = m.createRecorder({ store: recStore, mode: "record", identity: MACHINE, env: {} });
  await run(client(a.createFetch({ recorder: rec, fetch: constant })), false);
  await rec.close();
  if (kind !== "memory") await recStore.close();
  const store = open();
  const recorder = m.createRecorder({ store, mode: "replay", identity: MACHINE, env: {} });
  const upstream: typeof fetch = async () => {
    throw new Error("replay went upstream");
  };
  return {
    name,
    client: client(a.createFetch({ recorder, fetch: upstream })),
    fresh: () => id.clearNormalizationReuse?.(),
    close: async () => {
      await recorder.close();
      if (kind !== "memory") await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const sides = [await side("base", resolve(baseTree)), await side("new", here)];
const floor: Side = {
  name: "floor",
  client: client(floorFetch),
  fresh: () => {},
  close: async () => {},
};
const all = [...sides, floor];
for (const s of all) {
  for (const o of sides) o.fresh();
  await run(s.client, s !== floor); // warm-up, every answer checked
}
const cpu: Record<string, number[]> = { base: [], new: [], floor: [] };
for (let r = 0; r < rounds; r++) {
  for (const s of r % 2 === 0 ? all : [...all].reverse()) {
    for (const o of sides) o.fresh();
    const c0 = process.cpuUsage();
    await run(s.client, false);
    const u = process.cpuUsage(c0);
    cpu[s.name]!.push((u.user + u.system) / 1e3);
  }
}
for (const s of all) await s.close();
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
const min = (xs: number[]) => Math.min(...xs);
const [b, n, f] = [cpu.base!, cpu.new!, cpu.floor!];
const perRound = median(n.map((x, i) => x / b[i]!));
console.log(
  `${kind}, ${turns} turns, ${rounds} rounds, CPU ms per loop: base ${median(b).toFixed(1)} (min ${min(b).toFixed(1)}), new ${median(n).toFixed(1)} (min ${min(n).toFixed(1)}), floor ${median(f).toFixed(1)} (min ${min(f).toFixed(1)}); floor ÷ replay: base ${(median(f) / median(b)).toFixed(2)}×, new ${(median(f) / median(n)).toFixed(2)}×; new ÷ base ${perRound.toFixed(2)} (median of rounds)`,
);
