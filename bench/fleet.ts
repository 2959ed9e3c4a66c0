/**
 * `node --import tsx bench/fleet.ts [--full] [--stores redis,postgres]`: a
 * fleet of runner processes (bench/support/fleet-runner.ts) on one shared
 * store, PostgreSQL and Redis (each a private server on 127.0.0.1 this
 * bench starts), with 1, 2, 4 and 8 runners:
 *
 * - hits: every runner replays seeded entries, one call after another
 *   (a runner's agent loop is sequential): fleet throughput (hits/s, all
 *   runners) and the p50 / p99 latency of one hit;
 * - recordings: every runner records identities of its own (auto: miss,
 *   lease, write, release): fleet throughput and p50 / p99.
 *
 * Throughput with N runners against 1 says how the fleet scales; the
 * runners, the store server and the bench share this machine's cores, so
 * the fleet stops scaling at about the core count (say it with the figures,
 * and the load average). Part of the scale benches (issue 34), not of
 * `npm run bench`: it starts a PostgreSQL cluster and up to 8 processes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRecorder } from "../src/index.js";
import { postgresAvailable, startPostgresServer } from "../test/helpers/postgres-server.js";
import { redisServerBinary, startRedisServer } from "../test/helpers/redis-server.js";
import { machine, req, response } from "./support/hit-request.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const full = process.argv.includes("--full");
const storesArg = process.argv.indexOf("--stores");
const stores = storesArg >= 0 ? process.argv[storesArg + 1]!.split(",") : ["postgres", "redis"];
const FLEET = [1, 2, 4, 8];
const SEEDED = 200;
const HITS = full ? 2_000 : 400;
const RECORDS = full ? 500 : 100;

interface RunnerResult {
  ms: number;
  latencies: number[];
}

/** Start `n` runners, let them all go at once, and collect their results. */
async function round(
  storeUrl: string,
  kind: "hit" | "record",
  n: number,
  calls: number,
): Promise<RunnerResult[]> {
  const children: ChildProcess[] = [];
  const outputs: Array<Promise<RunnerResult>> = [];
  const readies: Array<Promise<void>> = [];
  for (let r = 0; r < n; r++) {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "bench/support/fleet-runner.ts",
        storeUrl,
        kind,
        String(r),
        String(calls),
        String(SEEDED),
        `${kind}-${n}`,
      ],
      { cwd: root, stdio: ["pipe", "pipe", "inherit"] },
    );
    children.push(child);
    let out = "";
    let markReady: () => void = () => {};
    readies.push(
      new Promise((resolve) => {
        markReady = resolve;
      }),
    );
    outputs.push(
      new Promise((resolve, reject) => {
        child.stdout!.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("ready\n")) markReady();
        });
        child.on("close", (code) => {
          const line = out.split("\n").find((l) => l.startsWith("{"));
          if (code !== 0 || line === undefined) reject(new Error(`runner exited ${code}`));
          else resolve(JSON.parse(line) as RunnerResult);
        });
      }),
    );
  }
  await Promise.all(readies);
  for (const child of children) child.stdin!.end("go\n");
  return Promise.all(outputs);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function seed(storeUrl: string): Promise<void> {
  const recorder = createRecorder({
    store: storeUrl,
    mode: "auto",
    namespace: "fleet",
    identity: machine,
  });
  for (let i = 0; i < SEEDED; i++) {
    await recorder.call({ ...req, prompt: `${req.prompt} seed ${i}` }, async () => response);
  }
  await recorder.close();
}

async function bench(name: string, storeUrl: string): Promise<void> {
  await seed(storeUrl);
  for (const [kind, calls] of [
    ["hit", HITS],
    ["record", RECORDS],
  ] as const) {
    let one = 0;
    for (const n of FLEET) {
      const results = await round(storeUrl, kind, n, calls);
      const wall = Math.max(...results.map((r) => r.ms));
      const throughput = (n * calls * 1000) / wall;
      if (n === 1) one = throughput;
      const all = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
      process.stdout.write(
        `| ${name} | ${kind === "hit" ? "hits" : "recordings"} | ${n} | ${throughput.toFixed(0)} | ${(throughput / one).toFixed(2)}× | ${percentile(all, 50).toFixed(2)} | ${percentile(all, 99).toFixed(2)} | ${loadavg()[0]!.toFixed(2)} |\n`,
      );
    }
  }
}

process.stdout.write(
  `fleet bench: ${HITS} hits / ${RECORDS} recordings per runner, ${availableParallelism()} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}\n\n`,
);
process.stdout.write(
  "| store | calls | runners | fleet calls/s | vs 1 runner | p50 ms | p99 ms | load (1 min) |\n|---|---|--:|--:|--:|--:|--:|--:|\n",
);
if (stores.includes("postgres")) {
  if (!postgresAvailable) process.stdout.write("(postgres not installed: skipped)\n");
  else {
    const pg = await startPostgresServer();
    try {
      await bench("PostgreSQL", pg.url);
    } finally {
      await pg.stop();
    }
  }
}
if (stores.includes("redis")) {
  if (redisServerBinary === undefined)
    process.stdout.write("(redis-server not installed: skipped)\n");
  else {
    const redis = await startRedisServer();
    try {
      await bench("Redis", redis.url);
    } finally {
      await redis.stop();
    }
  }
}
process.stdout.write(
  `\nload average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}\n`,
);
