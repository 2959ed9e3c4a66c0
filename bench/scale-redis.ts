/**
 * `node --import tsx bench/scale-redis.ts [--full] [--legacy] [--sizes N,M]`:
 * bench/scale.ts's measurements on a Redis store (a private redis-server on
 * 127.0.0.1, no persistence): hit p50 on an N-entry store (db 0) beside a
 * 1,000-entry one (db 1) on the same server, interleaved; `invocache ls
 * --json`, `stats --json` and `prune --older-than 3650d --dry-run` as whole
 * processes (wall time, peak RSS). For 10k and 100k entries (1M with
 * `--full`). The stores are built by a Lua script copying one real recorded
 * entry, with its stored metadata (redis-meta.ts), under fresh ids, the
 * metadata varied as bench/scale.ts varies it (namespaces, roles, models,
 * tokens, durations: `stats` sums realistic groups);
 * `--legacy` copies the values only, as a store written before stored
 * metadata (the commands then read every value, and say how to migrate).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@keyv/redis";
import { createRecorder, invocationIdentity } from "../src/index.js";
import { redisServerBinary, startRedisServer } from "../test/helpers/redis-server.js";
import { machine, req, response } from "./support/hit-request.js";
import { sameStats } from "./support/same-stats.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const full = process.argv.includes("--full");
const legacy = process.argv.includes("--legacy");
const baselineAt = process.argv.indexOf("--baseline");
// `--baseline <checkout>`: also run `stats` with another checkout's CLI (old/new ratio).
const baseline = baselineAt >= 0 ? process.argv[baselineAt + 1]! : undefined;
const only = process.argv.indexOf("--sizes");
const sizes =
  only >= 0
    ? process.argv[only + 1]!.split(",").map(Number)
    : [10_000, 100_000, ...(full ? [1_000_000] : [])];

// Copies of the entry under ARGV[1] (its id ARGV[2]), ids start..start+count-1, with metadata when ARGV[5] is '1'.
const COPY = `
local src = ARGV[1]
local id = ARGV[2]
local v = redis.call('GET', 'invocache:v:' .. src)
local m = redis.call('HGET', 'invocache:meta:v:' .. src, 'm')
local at = redis.call('HGET', 'invocache:meta:v:' .. src, 'at')
local namespaces = { 'default', 'ci' }
local roles = { 'planner', 'builder', 'critic', 'reviewer', 'tester' }
local models = { 'gpt-5', 'gpt-4o', 'gpt-4o-mini', 'claude-3-5-haiku-20241022', 'gemini-2.5-pro', 'sim-1' }
for i = tonumber(ARGV[3]), tonumber(ARGV[3]) + tonumber(ARGV[4]) - 1 do
  local nid = redis.sha1hex('a' .. i) .. string.sub(redis.sha1hex('b' .. i), 1, 24)
  local ns = namespaces[i % 2 + 1]
  if ARGV[5] ~= '1' then ns = 'default' end
  local key = ns .. string.sub(string.gsub(src, id, nid), 8)
  local val = string.gsub(v, id, nid)
  redis.call('SET', 'invocache:v:' .. key, val)
  if ARGV[5] == '1' then
    local meta = cjson.decode((string.gsub(m, id, nid)))
    meta.namespace = ns
    meta.role = roles[i % 5 + 1]
    meta.model = models[i % 6 + 1]
    meta.usage.model = meta.model
    meta.usage.inputTokens = 100 + i % 997
    meta.usage.outputTokens = 50 + i % 499
    meta.durationMs = (i % 100000) / 1000
    redis.call('HSET', 'invocache:meta:v:' .. key, 'm', cjson.encode(meta), 'len', #val, 'at', at)
    redis.call('ZADD', 'invocache:meta:keys', 0, key)
    redis.call('ZADD', 'invocache:meta:at', 0, at .. string.char(0) .. key)
  end
end
return 1`;

async function build(url: string, n: number, withMeta: boolean): Promise<void> {
  const recorder = createRecorder({ store: url, mode: "auto", identity: machine });
  await recorder.call(req, async () => response);
  await recorder.close();
  const id = invocationIdentity(req, machine);
  const client = createClient({ url });
  await client.connect();
  for (let start = 1; start < n; start += 5_000) {
    await client.eval(COPY, {
      keys: [],
      arguments: [
        `default:e:${id}:0`,
        id,
        String(start),
        String(Math.min(5_000, n - start)),
        withMeta ? "1" : "0",
      ],
    });
  }
  if (!withMeta) {
    // A store written before stored metadata: the original entry's metadata and the marker go too.
    await client.del([
      `invocache:meta:v:default:e:${id}:0`,
      "invocache:meta:keys",
      "invocache:meta:at",
      "invocache:meta:layout",
    ]);
  }
  await client.close();
}

async function hitP50(urlA: string, urlB: string): Promise<[number, number]> {
  const a = createRecorder({ store: urlA, mode: "replay", identity: machine });
  const b = createRecorder({ store: urlB, mode: "replay", identity: machine });
  const ta: number[] = [];
  const tb: number[] = [];
  const fn = async () => response;
  for (let i = 0; i < 2300; i++) {
    for (const [r, into] of [
      [a, ta],
      [b, tb],
    ] as const) {
      const t = performance.now();
      await r.call(req, fn);
      if (i >= 300) into.push((performance.now() - t) * 1000);
    }
  }
  await Promise.all([a.close(), b.close()]);
  const p50 = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return [p50(ta), p50(tb)];
}

function cli(args: string[], checkout = root): { seconds: number; rssMiB: number; stdout: string } {
  const r = spawnSync(
    "/usr/bin/time",
    [
      "-f",
      "%e %M",
      process.execPath,
      "--import",
      "tsx",
      join(checkout, "src/cli/main.ts"),
      ...args,
    ],
    { cwd: checkout, encoding: "utf8", maxBuffer: 1 << 30 },
  );
  if (r.status !== 0) throw new Error(`invocache ${args.join(" ")} failed: ${r.stderr}`);
  const last = r.stderr.trim().split("\n").at(-1)!.split(" ");
  return {
    seconds: Number(last[0]),
    rssMiB: Math.round(Number(last[1]) / 1024),
    stdout: r.stdout,
  };
}

if (redisServerBinary === undefined) throw new Error("redis-server is not installed");
if (!existsSync("/usr/bin/time")) throw new Error("needs /usr/bin/time for peak RSS");
process.stderr.write(
  `[scale-redis] load average ${loadavg()[0]!.toFixed(2)}${legacy ? " (--legacy: no stored metadata)" : ""}\n`,
);
const lines = [
  `| entries | redis used memory | build | hit p50 (vs 1k) | ls --json | stats --json${baseline === undefined ? "" : " (baseline, new/old)"} | prune --dry-run |`,
  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];
for (const n of sizes) {
  const server = await startRedisServer();
  try {
    const url = `${server.url}/0`;
    const small = `${server.url}/1`;
    await build(small, 1_000, !legacy);
    const t0 = performance.now();
    await build(url, n, !legacy);
    const buildS = (performance.now() - t0) / 1e3;
    const client = createClient({ url });
    await client.connect();
    const info = String(await client.info("memory"));
    await client.close();
    const used = /used_memory_human:(\S+)/.exec(info)?.[1] ?? "?";
    const [big, ref] = await hitP50(url, small);
    const ls = cli(["ls", "--store", url, "--json"]);
    const stats = cli(["stats", "--store", url, "--json"]);
    const prune = cli(["prune", "--store", url, "--older-than", "3650d", "--dry-run", "--json"]);
    const fmt = (c: { seconds: number; rssMiB: number }) =>
      `${c.seconds.toFixed(1)} s, ${c.rssMiB} MiB`;
    let statsText = fmt(stats);
    if (baseline !== undefined) {
      const old = cli(["stats", "--store", url, "--json"], baseline);
      sameStats(old.stdout, stats.stdout);
      statsText += ` (${old.seconds.toFixed(1)} s, ${(stats.seconds / old.seconds).toFixed(2)}×)`;
    }
    lines.push(
      `| ${n.toLocaleString("en")} | ${used} | ${buildS.toFixed(1)} s | ${big.toFixed(0)} µs (${(big / ref).toFixed(2)}×) | ${fmt(ls)} | ${statsText} | ${fmt(prune)} |`,
    );
    process.stderr.write(`[scale-redis] ${lines.at(-1)}\n`);
  } finally {
    await server.stop();
  }
}
process.stdout.write(`${lines.join("\n")}\n`);
process.stderr.write(`[scale-redis] load average ${loadavg()[0]!.toFixed(2)}\n`);
