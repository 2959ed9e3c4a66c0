/**
 * Where a warm proxy replay's time goes, by store (not part of `npm run
 * bench:peers`): in one process, alternated rounds of warm replays of the
 * same N calls (~4 KiB prompts, real openai SDK) through
 *
 * - a constant server answering one recorded answer (the same-size floor),
 * - the SDK alone (an in-process constant fetch with that answer),
 * - in-process `createFetch` and `invocache proxy` on SQLite, on a
 *   cassette and on an in-memory store (one `Store` object, recorded once),
 *
 * printing each row's median CPU and wall time per call and the proxy's own
 * rest per store: proxy − same-size floor − (in-process − SDK alone). The
 * memory store has no read to wait on: a rest that is larger on SQLite than
 * on memory is the store's read costing more behind the proxy than in-process.
 *
 * `node --import tsx bench/peers/proxy-split.ts [--calls N] [--rounds R]
 * [--passes P] [--rows a,b,…] [--als]` (`--als`: an AsyncLocalStorage is
 * entered before anything runs, so every row pays its hooks alike).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { Session } from "node:inspector/promises";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type OpenAI from "openai";
import { createFetch } from "../../src/adapters/index.js";
import { normalizationReuseStats } from "../../src/identity/index.js";
import { cassetteStore, createRecorder, openStore, type Store } from "../../src/index.js";
import { createProxy } from "../../src/proxy/index.js";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { option } from "../support/args.js";
import { type ChatRequest, client, request } from "./workload.js";

const calls = Number(option("calls", "300"));
const rounds = Number(option("rounds", "5"));
const passes = Number(option("passes", "1"));
const only = option("rows", "");
if (process.argv.includes("--als")) new AsyncLocalStorage().enterWith({});
const profileDir = option("profile", "");
const inspector = profileDir === "" ? undefined : new Session();
inspector?.connect();
await inspector?.post("Profiler.enable");
/** The row being measured in the last round, when profiling: its warm passes are profiled. */
let profiling: string | undefined;

function plain(i: number): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  const { stream: _stream, ...body } = request(i) as ChatRequest & { stream?: boolean };
  return body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
}

async function pass(openai: OpenAI, times: number): Promise<{ ms: number; cpuUs: number }> {
  if (profiling !== undefined) await inspector?.post("Profiler.start");
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let t = 0; t < times; t++)
    for (let i = 0; i < calls; i++) await openai.chat.completions.create(plain(i));
  const cpu = process.cpuUsage(cpu0);
  if (profiling !== undefined && inspector !== undefined) {
    const { profile } = await inspector.post("Profiler.stop");
    writeFileSync(
      join(profileDir, `${profiling.replace(/[^\w]+/g, "-")}.cpuprofile`),
      JSON.stringify(profile),
    );
  }
  return {
    ms: (performance.now() - t0) / (calls * times),
    cpuUs: (cpu.user + cpu.system) / (calls * times),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const dir = mkdtempSync(join(tmpdir(), "invocache-proxy-split-"));
const provider = await startFakeProvider();
const upstream = `${provider.url}/v1`;
const sqliteUrl = `sqlite://${join(dir, "s.sqlite")}`;
const cassette = join(dir, "c.yaml");
const memory: Store = openStore("memory://");
// The opt-in better-sqlite3 driver on the same file, when a build is named
// (INVOCACHE_BETTER_SQLITE3, a package directory, put on NODE_PATH before
// this process starts: `NODE_PATH=$(dirname "$INVOCACHE_BETTER_SQLITE3")`):
// its reads run on the main thread, without the thread-pool hop per hit.
const better: Store | undefined =
  (process.env.INVOCACHE_BETTER_SQLITE3 ?? "") === ""
    ? undefined
    : openStore(sqliteUrl, { sqliteDriver: "better-sqlite3" });
const opts = { upstreams: { bench: provider.url }, env: {} } as const;
let sized = "";
for (const store of [sqliteUrl, cassette, memory]) {
  const rec = await createProxy({ ...opts, store, mode: "record" });
  const openai = client(`${rec.url}/bench/v1`);
  for (let i = 0; i < calls; i++) {
    const answer = await openai.chat.completions.create(plain(i));
    if (i === 0) sized = JSON.stringify(answer);
  }
  await rec.close();
}
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(sized),
    });
    res.end(sized);
  });
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const floorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

type Row = { name: string; open(): Promise<{ openai: OpenAI; close(): Promise<void> }> };
let current = "";
let lastRound = false;
/** A fresh instance of the row, one unmeasured pass, then `passes` measured (profiled in the last round). */
async function measure(row: Row): Promise<{ ms: number; cpuUs: number }> {
  const { openai, close } = await row.open();
  try {
    await pass(openai, 1);
    profiling = lastRound ? current : undefined;
    return await pass(openai, passes);
  } finally {
    profiling = undefined;
    await close();
  }
}
const proxyRow = (name: string, store: string | Store): Row => ({
  name: `proxy ${name}`,
  open: async () => {
    const proxy = await createProxy({ ...opts, store, mode: "replay" });
    return { openai: client(`${proxy.url}/bench/v1`), close: () => proxy.close() };
  },
});
const inProcessRow = (name: string, store: string | Store): Row => ({
  name: `in-process ${name}`,
  open: async () => {
    const recorder = createRecorder({
      store: store === cassette ? cassetteStore(cassette) : store,
      mode: "replay",
      env: {},
    });
    return { openai: client(upstream, createFetch({ recorder })), close: () => recorder.close() };
  },
});
const constantFetch: typeof globalThis.fetch = async () =>
  new Response(sized, { status: 200, headers: { "content-type": "application/json" } });
const plainRow = (name: string, make: () => OpenAI): Row => ({
  name,
  open: async () => ({ openai: make(), close: async () => {} }),
});
const rows: Row[] = [
  plainRow("floor (same size)", () => client(floorUrl)),
  plainRow("SDK alone", () => client(upstream, constantFetch)),
  proxyRow("SQLite", sqliteUrl),
  inProcessRow("SQLite", sqliteUrl),
  ...(better === undefined
    ? []
    : [
        proxyRow("SQLite (better-sqlite3)", better),
        inProcessRow("SQLite (better-sqlite3)", better),
      ]),
  proxyRow("cassette", cassette),
  inProcessRow("cassette", cassette),
  proxyRow("memory", memory),
  inProcessRow("memory", memory),
].filter((r) => only === "" || only.split(",").some((o) => r.name.includes(o)));

// `--perf-row NAME`: only that row, after a pause for `perf record -p` to attach.
const perfRow = option("perf-row", "");
if (perfRow !== "") {
  const row = rows.find((r) => r.name === perfRow);
  if (row === undefined) throw new Error(`no row ${perfRow}`);
  for (let w = 0; w < Number(option("perf-warmup", "3")); w++) await measure(row);
  const { openai, close } = await row.open();
  await pass(openai, 1);
  console.log(`ready ${process.pid}`);
  await new Promise((r) => setTimeout(r, 2000));
  const m = await pass(openai, passes);
  await close();
  console.log(
    `${row.name}: CPU ${m.cpuUs.toFixed(0)} µs/call, wall ${(m.ms * 1e3).toFixed(0)} µs/call`,
  );
  server.close();
  await memory.close();
  await better?.close();
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
const got = new Map<string, { ms: number[]; cpu: number[] }>();
console.log(
  `load ${loadavg()[0]?.toFixed(2)}; ${calls} calls × ${passes} warm pass(es), ${rounds} rounds`,
);
try {
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(k + r) % rows.length] as Row;
      current = row.name;
      lastRound = profileDir !== "" && r === rounds - 1;
      const s0 = normalizationReuseStats();
      const m = await measure(row);
      const s1 = normalizationReuseStats();
      if (process.argv.includes("--reuse-stats"))
        console.log(
          `${row.name}: reuse hits ${s1.hits - s0.hits}, misses ${s1.misses - s0.misses}, entries ${s1.entries}`,
        );
      const into = got.get(row.name) ?? { ms: [], cpu: [] };
      into.ms.push(m.ms * 1e3);
      into.cpu.push(m.cpuUs);
      got.set(row.name, into);
    }
    console.log(`round ${r + 1} done (load ${loadavg()[0]?.toFixed(2)})`);
  }
  const cpu = (n: string) => median(got.get(n)?.cpu ?? [Number.NaN]);
  for (const [name, m] of got)
    console.log(
      `${name.padEnd(22)} CPU ${median(m.cpu).toFixed(0).padStart(6)} µs/call (${Math.min(...m.cpu).toFixed(0)}–${Math.max(...m.cpu).toFixed(0)})  wall ${median(m.ms).toFixed(0).padStart(6)} µs/call`,
    );
  const hop = cpu("floor (same size)") - cpu("SDK alone");
  for (const s of ["SQLite", "SQLite (better-sqlite3)", "cassette", "memory"]) {
    const hit = cpu(`in-process ${s}`) - cpu("SDK alone");
    const own = cpu(`proxy ${s}`) - cpu("floor (same size)") - hit;
    if (Number.isFinite(own))
      console.log(
        `${s}: hop ${hop.toFixed(0)} µs, hit ${hit.toFixed(0)} µs, proxy's own rest ${own.toFixed(0)} µs`,
      );
  }
} finally {
  server.close();
  await memory.close();
  await better?.close();
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
}
