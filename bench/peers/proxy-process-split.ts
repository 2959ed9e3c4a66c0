/**
 * Where a proxy replay's server-side CPU goes, each server in its own
 * process (not part of `npm run bench:peers`; Linux: it reads each child's
 * CPU time from /proc). `proxy-split.ts` runs client, proxy and floor in one
 * process and takes the proxy's share as a difference of four timings; here
 * each server's own CPU per call is read directly, for
 *
 * - a constant server answering one recorded answer (the floor's server),
 * - a bare node:http server answering from `createFetchAnswerer` on the
 *   same store (bench/peers/hit-server.ts: the recorder's hit, none of the
 *   proxy's own code),
 * - `invocache proxy --mode replay` on the store,
 *
 * in alternated rounds of warm passes over the same N recorded calls (~4 KiB
 * prompts, the real openai SDK in this process; every replayed answer is
 * compared with the recorded one). bare − constant is the hit as a server
 * pays it; proxy − bare is the proxy's own code.
 *   node --import tsx bench/peers/proxy-process-split.ts [--store sqlite|cassette] [--calls N] [--passes P] [--rounds R] [--node-flags "…"]
 * (`--node-flags`: Node/V8 flags for the bare server and the proxy, e.g.
 * `--max-semi-space-size=64`, to see what the collector costs them).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type OpenAI from "openai";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { countOption, option } from "../support/args.js";
import { type ChatRequest, client, request } from "./workload.js";

const kind = option("store", "cassette");
if (kind !== "sqlite" && kind !== "cassette") {
  process.stderr.write(`--store must be sqlite or cassette, got ${JSON.stringify(kind)}\n`);
  process.exit(2);
}
const calls = countOption("calls", 300);
const passes = countOption("passes", 5);
const rounds = countOption("rounds", 5);
const nodeFlags = option("node-flags", "")
  .split(" ")
  .filter((f) => f !== "");
if (!existsSync("/proc/self/stat")) {
  process.stderr.write("proxy-process-split: needs /proc (Linux) to read each server's CPU time\n");
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ticks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** A process's CPU time (user + system), in µs, from /proc. */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticks;
}

type Child = { pid: number; url: string; process: ChildProcess };
/** Start a server process and wait for the address it prints. */
function start(args: string[]): Promise<Child> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, INVOCACHE_MODE: "" },
    });
    let err = "";
    p.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    p.stdout.on("data", (d: Buffer) => {
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(d.toString());
      if (m !== null) resolve({ pid: p.pid as number, url: m[0], process: p });
    });
    p.on("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${err}`)));
  });
}
/** SIGTERM, and wait for the exit (the proxy writes what it recorded first). */
function stop(c: Child): Promise<void> {
  return new Promise((resolve) => {
    c.process.removeAllListeners("exit");
    c.process.once("exit", () => resolve());
    c.process.kill("SIGTERM");
  });
}

function plain(i: number): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  const { stream: _stream, ...body } = request(i) as ChatRequest & { stream?: boolean };
  return body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
}
const bodies = Array.from({ length: calls }, (_, i) => plain(i));

const dir = mkdtempSync(join(tmpdir(), "invocache-proxy-process-split-"));
const where = kind === "sqlite" ? `sqlite://${join(dir, "s.sqlite")}` : join(dir, "c.yaml");
const provider = await startFakeProvider();
const cli = [...nodeFlags, "--import", "tsx", "src/cli/main.ts", "proxy", "--store", where];
const upstream = ["--upstream", `fake=${provider.url}`];
const recorded: string[] = [];
{
  const rec = await start([...cli, "--mode", "record", ...upstream]);
  const openai = client(`${rec.url}/fake/v1`);
  for (const body of bodies)
    recorded.push(JSON.stringify(await openai.chat.completions.create(body)));
  await stop(rec);
}
await provider.close();

const sized = recorded[0] as string;
const constantScript = `const s=require("node:http").createServer((q,r)=>{q.resume();q.on("end",()=>{r.writeHead(200,{"content-type":"application/json","content-length":Buffer.byteLength(A)});r.end(A)})});const A=${JSON.stringify(sized)};s.listen(0,"127.0.0.1",()=>console.log("http://127.0.0.1:"+s.address().port))`;
const servers = {
  constant: await start(["-e", constantScript]),
  bare: await start([
    ...nodeFlags,
    "--import",
    "tsx",
    "bench/peers/hit-server.ts",
    where,
    provider.url,
  ]),
  proxy: await start([...cli, "--mode", "replay", ...upstream]),
};
type Name = keyof typeof servers;
const names = Object.keys(servers) as Name[];
const clients = {
  constant: client(`${servers.constant.url}/v1`),
  bare: client(`${servers.bare.url}/fake/v1`),
  proxy: client(`${servers.proxy.url}/fake/v1`),
};

let mismatches = 0;
async function pass(name: Name): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const got = JSON.stringify(await clients[name].chat.completions.create(bodies[i]!));
    if (name !== "constant" && got !== recorded[i]) mismatches++;
  }
}

// Warm every server, then alternated rounds, the order rotated each round.
for (const name of names) await pass(name);
const server: Record<Name, number[]> = { constant: [], bare: [], proxy: [] };
const own: Record<Name, number[]> = { constant: [], bare: [], proxy: [] };
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length] as Name;
    const s0 = cpuUs(servers[name].pid);
    const c0 = process.cpuUsage();
    for (let p = 0; p < passes; p++) await pass(name);
    const c = process.cpuUsage(c0);
    server[name].push((cpuUs(servers[name].pid) - s0) / (calls * passes));
    own[name].push((c.user + c.system) / (calls * passes));
  }
  process.stderr.write(`round ${round + 1} done (load ${loadavg()[0]?.toFixed(2)})\n`);
}
for (const c of Object.values(servers)) await stop(c);
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
console.log(
  `${kind}: ${calls} calls × ${passes} passes × ${rounds} rounds; CPU per call (median, rounds' range); ${mismatches} mismatched answers`,
);
for (const name of names) {
  console.log(
    `  ${name.padEnd(9)} server ${median(server[name]).toFixed(0).padStart(5)} µs (${range(server[name])})   client ${median(own[name]).toFixed(0).padStart(5)} µs (${range(own[name])})`,
  );
}
const m = (n: Name) => median(server[n]);
console.log(
  `  the hit as a server pays it (bare − constant): ${(m("bare") - m("constant")).toFixed(0)} µs; the proxy's own code (proxy − bare): ${(m("proxy") - m("bare")).toFixed(0)} µs`,
);
if (mismatches > 0) process.exitCode = 1;
