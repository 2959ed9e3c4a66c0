/**
 * Where a recording through the proxy spends its time (not part of `npm run
 * bench:peers`): in one process, alternated rounds of N calls (~4 KiB
 * prompts, real openai SDK, none streamed) recorded through `invocache
 * proxy` (mode `record`, a fresh store each round) on SQLite and on a
 * cassette, and the same calls made to the upstream (the loopback fake
 * provider) directly, printing each row's median CPU per call and its
 * median multiple of the same round's direct calls, as bench:peers'
 * recording rounds do.
 *
 * `--base DIR` also records through the proxy of another checkout (its
 * `src/proxy/index.ts`, e.g. a worktree of main), in the same rounds and
 * process, so two versions are compared under the same load. `--profile
 * DIR` writes the last round's CPU profile of each row. `memory` (a row
 * of `--stores`) records into an in-memory store: the proxy and recorder
 * without a store's write.
 *
 * `--mode auto` records as an `auto`-mode miss does (every call a miss in
 * a fresh store) instead of `record` mode.
 *
 * `node --import tsx bench/peers/proxy-record.ts [--calls N] [--rounds R]
 * [--stores sqlite,cassette,memory] [--mode record|auto] [--base DIR] [--profile DIR]`
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type OpenAI from "openai";
import { createProxy } from "../../src/proxy/index.js";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { option } from "../support/args.js";
import { type ChatRequest, client, request } from "./workload.js";

const calls = Number(option("calls", "300"));
const rounds = Number(option("rounds", "5"));
const stores = option("stores", "sqlite,cassette").split(",");
const baseDir = option("base", "");
/** `record` (as bench:peers) or `auto` (a miss: lookup, lease, re-check, write, release). */
const mode = option("mode", "record") as "record" | "auto";
const profileDir = option("profile", "");
const inspector = profileDir === "" ? undefined : new Session();
inspector?.connect();
await inspector?.post("Profiler.enable");

type Proxy = typeof createProxy;
const versions: [string, Proxy][] = [["this", createProxy]];
if (baseDir !== "") {
  const mod = (await import(pathToFileURL(resolve(baseDir, "src/proxy/index.ts")).href)) as {
    createProxy: Proxy;
  };
  versions.push(["base", mod.createProxy]);
}

function plain(i: number): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  const { stream: _stream, ...body } = request(i) as ChatRequest & { stream?: boolean };
  return body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
}

/** CPU ticks so far of this process's main thread and of all its other threads (Linux; else zeros). */
function threadTicks(): { main: number; others: number } {
  let main = 0;
  let others = 0;
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ticks = Number(f[11]) + Number(f[12]);
      if (Number(tid) === process.pid) main += ticks;
      else others += ticks;
    }
  } catch {}
  return { main, others };
}
/** The share of the last pass's CPU spent off the main thread, per row. */
const offMain: Record<string, number[]> = {};

async function pass(openai: OpenAI, n: number, profile: string | undefined): Promise<number> {
  if (profile !== undefined) await inspector?.post("Profiler.start");
  const cpu0 = process.cpuUsage();
  const t0 = threadTicks();
  for (let i = 0; i < n; i++) await openai.chat.completions.create(plain(i));
  const cpu = process.cpuUsage(cpu0);
  const t1 = threadTicks();
  lastOffMain = (t1.others - t0.others) / Math.max(1, t1.main - t0.main + t1.others - t0.others);
  if (profile !== undefined && inspector !== undefined) {
    const { profile: p } = await inspector.post("Profiler.stop");
    writeFileSync(
      join(profileDir, `${profile.replace(/[^\w]+/g, "-")}.cpuprofile`),
      JSON.stringify(p),
    );
  }
  return (cpu.user + cpu.system) / n;
}

let lastOffMain = 0;
/** Append `x` to `into[row]`. */
function push(into: Record<string, number[]>, row: string, x: number): void {
  const list = into[row] ?? [];
  list.push(x);
  into[row] = list;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const dir = mkdtempSync(join(tmpdir(), "invocache-proxy-record-"));
const provider = await startFakeProvider();
const direct = client(`${provider.url}/v1`);
const rows = ["direct", ...versions.flatMap(([v]) => stores.map((s) => `${v} ${s}`))];
const cpu: Record<string, number[]> = {};
const multiple: Record<string, number[]> = {};
let serial = 0;
try {
  for (let r = -1; r < rounds; r++) {
    const n = r < 0 ? Math.min(60, calls) : calls; // round -1 warms the process up, unmeasured
    const order = rows.map((_, i) => rows[(i + Math.max(r, 0)) % rows.length] as string);
    const took: Record<string, number> = {};
    for (const row of order) {
      const profile = profileDir !== "" && r === rounds - 1 ? row : undefined;
      if (row === "direct") {
        took[row] = await pass(direct, n, profile);
        push(offMain, row, lastOffMain);
        continue;
      }
      const [v, s] = row.split(" ") as [string, string];
      const make = versions.find(([name]) => name === v)?.[1] as Proxy;
      serial++;
      const store =
        s === "sqlite"
          ? `sqlite://${join(dir, `r${serial}.sqlite`)}`
          : s === "memory"
            ? "memory://"
            : join(dir, `r${serial}.yaml`);
      const proxy = await make({
        store,
        mode,
        upstreams: { bench: provider.url },
        env: {},
      });
      const before = provider.calls;
      took[row] = await pass(client(`${proxy.url}/bench/v1`), n, profile);
      push(offMain, row, lastOffMain);
      await proxy.close();
      if (provider.calls - before !== n)
        throw new Error(`${row}: ${provider.calls - before} upstream calls for ${n}`);
    }
    if (r < 0) continue;
    for (const row of rows) {
      push(cpu, row, took[row] as number);
      push(multiple, row, (took[row] as number) / (took.direct as number));
    }
    console.log(
      `round ${r + 1}/${rounds} (load ${(loadavg()[0] as number).toFixed(2)}): ${rows
        .map((row) => `${row} ${(took[row] as number).toFixed(0)} µs`)
        .join(", ")}`,
    );
  }
  for (const row of rows) {
    const m = multiple[row] as number[];
    console.log(
      `${row.padEnd(16)} ${median(cpu[row] as number[])
        .toFixed(0)
        .padStart(
          6,
        )} µs CPU/call, ${median(m).toFixed(2)}× direct (${Math.min(...m).toFixed(2)}–${Math.max(...m).toFixed(2)}), ${(median(offMain[row] as number[]) * 100).toFixed(0)} % off the main thread`,
    );
  }
  // The two versions against each other, round by round (same load, same order rotation).
  if (versions.length > 1)
    for (const s of stores) {
      const ratios = (cpu[`this ${s}`] as number[]).map(
        (t, i) => t / (cpu[`base ${s}`] as number[])[i]!,
      );
      console.log(
        `this/base ${s}: ${median(ratios).toFixed(3)} by CPU (rounds ${ratios.map((x) => x.toFixed(2)).join(", ")})`,
      );
    }
} finally {
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
}
