/**
 * `npm run bench:peers [-- --quick] [-- --json] [-- --no-docs]`: invocache
 * (cassette and SQLite) beside nock.back and Polly.js on one workload
 * (bench/peers/workload.ts), recorded against the loopback fake provider and
 * replayed with the provider stopped. Prints the side-by-side table, the
 * miss/repeat comparison and the target verdicts; a full run also rewrites
 * the "Peers" section of docs/performance.md.
 *
 * Shape: every run (direct baseline, one tool recording, one tool
 * replaying) is a fresh child process (child.ts), run in rounds with the
 * order rotated each round. The provider lives here, so the parent counts
 * the upstream calls of each run; for the replays it is replaced by a
 * tripwire on the same port that counts any connection.
 *
 * Every child is plain `node` running the harness bundled once per run
 * (harness.ts: child.ts compiled to one ES module, packages imported from
 * node_modules, invocache from its compiled package dist/, built first when
 * older than src/), as a user's process runs each tool; `--sources` runs
 * child.ts under tsx with invocache's sources instead.
 *
 * Options: `--quick` (100 calls, 1 round, writes no docs), `--calls N`,
 * `--rounds N` (replay rounds), `--record-rounds N`, `--json`, `--no-docs`,
 * `--keep` (keep the recordings, path printed), `--verbose` (children's output),
 * `--sources`, `--servers-only` (just the proxy servers table, bench/peers/servers.ts),
 * `--server-calls N` (its distinct calls, default 300), `--server-rounds R` (its
 * alternated replay rounds, default 7), `--server-record-rounds R` (default 5),
 * `--server-passes P` (warm passes per server and round, default 2),
 * `--cassette-first` (each round's rotation starts with the cassette before
 * SQLite), `--servers` (add it to a quick run).
 * Exit code 1 when a correctness check fails; a missed target is reported,
 * not fatal (timings depend on the machine).
 */
import { fork } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath } from "node:url";
import { type FakeProvider, startFakeProvider } from "../../test/fake-provider/index.js";
import { postgresAvailable, startPostgresServer } from "../../test/helpers/postgres-server.js";
import { redisServerBinary, startRedisServer } from "../../test/helpers/redis-server.js";
import { describeMachine } from "../support/machine.js";
import type { ChildResult, ChildTask, LeakResult, RunResult } from "./child.js";
import { renderFloor } from "./floor.js";
import { type CompiledHarness, compileHarness } from "./harness.js";
import { type Collected, renderConsole, renderDocSection, withPeersSection } from "./report.js";
import { availableTools, BETTER_SQLITE3_ENV, SERVER_ENV, type ToolId } from "./tools.js";

const here = dirname(fileURLToPath(import.meta.url));
const docsPath = join(here, "..", "..", "docs", "performance.md");

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const num = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v < 1) {
    process.stderr.write(`${name} needs a positive integer\n`);
    process.exit(2);
  }
  return v;
};
const quick = flag("--quick");
const calls = num("--calls", quick ? 100 : 1000);
const settings = {
  quick,
  calls,
  replayRounds: num("--rounds", quick ? 1 : 5),
  recordRounds: num("--record-rounds", quick ? 1 : 5),
  /**
   * The miss and repeat probes run on a recording of this many calls, for
   * every tool: invocache's miss report diffs the request against every
   * recorded entry (~0.2 s per 4 KiB prompt here), so a miss against the full
   * recording would take minutes. Reported as a bug; see the Peers section.
   */
  probeCalls: Math.min(quick ? 3 : 20, calls),
  /** Cold start as a whole process: entries in the recording, and processes per tool. */
  coldStartCalls: Math.min(100, calls),
  // Whole processes drift by ±15 % here: 11 of them per tool, so one slow one moves no median.
  coldStartRounds: quick ? 1 : 11,
  harness: flag("--sources") ? ("sources" as const) : ("dist" as const),
};
const verbose = flag("--verbose");
const writeDocs = !quick && !flag("--no-docs");
const log = (line: string) => process.stderr.write(`[peers] ${line}\n`);
const fromSources = flag("--sources");

/** `--servers-only`: just the proxy servers table (bench/peers/servers.ts). */
async function serversTable(): Promise<boolean> {
  const { renderServers, runServers } = await import("./servers.js");
  const result = await runServers(num("--server-calls", quick ? 30 : 300), log, {
    rounds: num("--server-rounds", quick ? 3 : 7),
    recordRounds: num("--server-record-rounds", quick ? 2 : 5),
    passes: num("--server-passes", quick ? 1 : 2),
    cassetteFirst: flag("--cassette-first"),
  });
  process.stdout.write(`${renderServers(result)}\n`);
  for (const f of result.failures) log(`FAILED: ${f}`);
  return result.failures.length === 0;
}
if (flag("--servers-only")) {
  process.exit((await serversTable()) ? 0 : 1);
}
/** The child every run forks: the bundled harness on plain node, or child.ts under tsx. */
const harness: CompiledHarness = fromSources
  ? { path: join(here, "child.ts"), env: {} }
  : await compileHarness(log);

/** Run one task in a fresh process; its stdout/stderr are shown only with --verbose or on failure. */
function runChild(task: ChildTask): Promise<ChildResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let result: ChildResult | undefined;
    let output = "";
    const child = fork(harness.path, [JSON.stringify(task)], {
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // Plain node for the bundled harness: not this process's `--import tsx`.
      ...(fromSources ? {} : { execArgv: [] }),
      env: { ...process.env, ...harness.env },
    });
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (verbose) process.stderr.write(chunk);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.on("message", (m) => {
      result = m as ChildResult;
    });
    child.on("exit", (code, signal) => {
      const r = result ?? {
        phase: "error" as const,
        error: `process ended (${signal ?? `exit ${code}`}) without a result`,
      };
      if (r.phase === "error" && !verbose && output !== "") r.error += `\n${output}`;
      if (verbose) {
        const who = "tool" in task ? `${task.phase} ${task.tool}` : task.phase;
        log(`${who}: child took ${(performance.now() - t0).toFixed(0)} ms`);
      }
      resolve(r);
    });
  });
}

/** A stand-in for the stopped provider on its port: counts every connection, answers none. */
async function startTripwire(port: number): Promise<{ connections(): number; close(): void }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return { connections: () => connections, close: () => server.close() };
}

/** Round r's order: rotated, so no tool always runs first or right after another. */
function rotate<T>(xs: readonly T[], r: number): T[] {
  const k = r % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

const failures: string[] = [];
const fail = (what: string) => {
  failures.push(what);
  log(`FAILED: ${what}`);
};

function asRun(r: ChildResult, what: string): RunResult | undefined {
  if (r.phase === "error") {
    fail(`${what}: ${r.error}`);
    return undefined;
  }
  return r as RunResult;
}

const machine = describeMachine();
log(
  `${machine.cpu}, ${machine.cores} cores, node ${machine.node}, load ${machine.load1}; ` +
    `${settings.calls} calls, ${settings.recordRounds} record and ${settings.replayRounds} replay rounds`,
);
if (machine.load1 > machine.cores / 2) log("the machine is busy: expect noisy numbers");

const started = performance.now();

// The shared stores, reported beside the embedded ones: throwaway servers on
// 127.0.0.1, named to the children through the environment they inherit.
const servers: { stop(): Promise<void> }[] = [];
const missingServers: string[] = [];
if (redisServerBinary !== undefined) {
  const redis = await startRedisServer();
  servers.push(redis);
  process.env[SERVER_ENV["invocache-redis"]] = redis.url;
} else missingServers.push("invocache + Redis (redis-server is not installed)");
if (postgresAvailable) {
  const pg = await startPostgresServer();
  servers.push(pg);
  process.env[SERVER_ENV["invocache-postgres"]] = pg.url;
} else missingServers.push("invocache + Postgres (postgres is not installed)");
for (const m of missingServers) log(`left out: ${m}`);
// The opt-in better-sqlite3 driver, when a build of it is named (tools.ts).
const betterSqlite3 = process.env[BETTER_SQLITE3_ENV] ?? "";
if (betterSqlite3 !== "") {
  process.env.NODE_PATH = [dirname(resolvePath(betterSqlite3)), process.env.NODE_PATH ?? ""]
    .filter((p) => p !== "")
    .join(delimiter);
  log(`better-sqlite3 from ${betterSqlite3} (${BETTER_SQLITE3_ENV})`);
} else {
  log(`left out: invocache + SQLite (better-sqlite3) (set ${BETTER_SQLITE3_ENV} to a build of it)`);
}
const TOOL_IDS = availableTools();

const root = mkdtempSync(join(tmpdir(), "invocache-peers-"));
const dirOf = (id: ToolId) => join(root, id);
/** The target compares invocache's embedded stores with nock.back on a 100-entry recording. */
const COLD_START_TOOLS: ToolId[] = [
  "invocache-cassette",
  "invocache-sqlite",
  ...(TOOL_IDS.includes("invocache-sqlite-better") ? (["invocache-sqlite-better"] as const) : []),
  "nock-back",
];
const coldDirOf = (id: ToolId) => join(root, `cold-${id}`);
for (const id of TOOL_IDS) mkdirSync(dirOf(id), { recursive: true });

const collected: Collected = {
  settings,
  machine,
  seconds: 0,
  tools: TOOL_IDS,
  leftOut: missingServers,
  direct: [],
  record: Object.fromEntries(TOOL_IDS.map((id) => [id, []])) as unknown as Collected["record"],
  replay: Object.fromEntries(TOOL_IDS.map((id) => [id, []])) as unknown as Collected["replay"],
  floor: [],
  coldStart: {},
  warmCassette: [],
  probes: {},
  failures,
};

/** Runs of the SDK floor (child.ts, `floor`): every replay's calls/s is reported as a fraction of it. */
const floorRuns = collected.floor;

let provider: FakeProvider | undefined = await startFakeProvider();
const port = Number(new URL(provider.url).port);
const baseUrl = `${provider.url}/v1`;
let tripwire: Awaited<ReturnType<typeof startTripwire>> | undefined;

try {
  // ---- record rounds (provider up) ------------------------------------------
  const contenders = ["direct", ...TOOL_IDS] as const;
  for (let round = 0; round < settings.recordRounds; round++) {
    for (const who of rotate(contenders, round)) {
      const before = provider.calls;
      // The last round also records the small probe recording and probes it.
      const probe =
        round === settings.recordRounds - 1
          ? { dir: join(root, `probe-${who}`), calls: settings.probeCalls }
          : undefined;
      const task: ChildTask =
        who === "direct"
          ? { phase: "direct", baseUrl, calls: settings.calls }
          : {
              phase: "record",
              tool: who,
              dir: dirOf(who),
              baseUrl,
              calls: settings.calls,
              ...(probe === undefined ? {} : { probe }),
            };
      const r = asRun(await runChild(task), `${who} record round ${round + 1}`);
      const upstream = provider.calls - before;
      if (r === undefined) continue;
      const expected = settings.calls + (who === "direct" ? 0 : (probe?.calls ?? 0));
      if (upstream !== expected) {
        fail(
          `${who} round ${round + 1}: ${upstream} upstream calls, expected ${expected}` +
            (probe === undefined ? "" : " (a probe in replay mode went upstream?)"),
        );
      }
      if (who === "direct") collected.direct.push(r);
      else {
        collected.record[who].push(r);
        if (r.probe !== undefined) {
          // The temporary directory in messages is noise in the docs.
          const clean = (xs: string[]) => xs.map((x) => x.replaceAll(root, "<tmp>"));
          const p = r.probe;
          collected.probes[who] = {
            ...p,
            miss: clean(p.miss),
            repeat: "chain" in p.repeat ? { ...p.repeat, chain: clean(p.repeat.chain) } : p.repeat,
            ...(p.repeatInRun === undefined
              ? {}
              : {
                  repeatInRun:
                    "chain" in p.repeatInRun
                      ? { ...p.repeatInRun, chain: clean(p.repeatInRun.chain) }
                      : p.repeatInRun,
                }),
          };
        }
      }
      log(
        `record ${round + 1}/${settings.recordRounds} ${who}: ${r.totalMs.toFixed(0)} ms` +
          (r.recordingBytes === undefined ? "" : `, ${r.recordingBytes} bytes`),
      );
    }
  }

  // ---- the SDK floor (two upstream calls capture the constant answers) ------
  for (let round = 0; round < settings.replayRounds; round++) {
    const before = provider.calls;
    const r = asRun(
      await runChild({ phase: "floor", baseUrl, calls: settings.calls }),
      `SDK floor round ${round + 1}`,
    );
    if (provider.calls - before !== 2) {
      fail(`SDK floor round ${round + 1}: ${provider.calls - before} upstream calls, expected 2`);
    }
    if (r !== undefined) {
      floorRuns.push(r);
      log(
        `SDK floor ${round + 1}/${settings.replayRounds}: ${((r.calls - 1) / ((r.steadyMs ?? 0) / 1e3)).toFixed(0)} calls/s`,
      );
    }
  }

  // ---- leak check: every tool in one process, one after the other ----------
  {
    const calls = Math.min(quick ? 3 : 10, settings.calls);
    const before = provider.calls;
    const r = await runChild({
      phase: "leak-check",
      dir: join(root, "leak-check"),
      baseUrl,
      calls,
    });
    if (r.phase === "error") fail(`leak check: ${r.error}`);
    else {
      collected.leak = r as LeakResult;
      const sessions = TOOL_IDS.length + 1;
      const upstream = provider.calls - before;
      // Each tool records `calls` calls live; its replay must add none.
      if (upstream !== calls * sessions) {
        collected.leak.checks.push({
          tool: "invocache-cassette",
          ok: false,
          problems: [
            `${upstream} upstream calls for ${calls * sessions} recorded calls: a replay went upstream`,
          ],
        });
      }
      for (const c of collected.leak.checks) {
        log(`leak check ${c.tool}: ${c.ok ? "clean" : c.problems.join("; ")}`);
      }
    }
  }

  // ---- cold-start recordings (provider up): the first 100 calls ------------
  for (const id of COLD_START_TOOLS) {
    const r = await runChild({
      phase: "record",
      tool: id,
      dir: coldDirOf(id),
      baseUrl,
      calls: settings.coldStartCalls,
    });
    if (r.phase === "error") fail(`${id} cold-start recording: ${r.error}`);
  }

  // ---- replay rounds (provider stopped, tripwire on its port) ---------------
  await provider.close();
  provider = undefined;
  tripwire = await startTripwire(port);
  const cassetteCache = join(dirOf("invocache-cassette"), "parse-cache");
  for (let round = 0; round < settings.replayRounds; round++) {
    for (const id of rotate(TOOL_IDS, round)) {
      // As on a fresh checkout: the parsed-form cache (never committed) is absent.
      if (id === "invocache-cassette") rmSync(cassetteCache, { recursive: true, force: true });
      const before = tripwire.connections();
      const r = asRun(
        await runChild({
          phase: "replay",
          tool: id,
          dir: dirOf(id),
          baseUrl,
          calls: settings.calls,
        }),
        `${id} replay round ${round + 1}`,
      );
      const upstream = tripwire.connections() - before;
      if (upstream !== 0) fail(`${id} replay round ${round + 1}: ${upstream} upstream connections`);
      if (r === undefined) continue;
      if (r.mismatches !== 0) {
        fail(`${id} replay round ${round + 1}: ${r.mismatches} answers differ from the recording`);
      }
      collected.replay[id].push(r);
      log(
        `replay ${round + 1}/${settings.replayRounds} ${id}: cold ${r.coldMs?.toFixed(0)} ms, ` +
          `${((r.calls - 1) / ((r.steadyMs ?? 0) / 1e3)).toFixed(0)} calls/s`,
      );
      if (id === "invocache-cassette" && !quick) {
        // Right after: the same replay with the parsed-form cache the last run left (a second run on the same checkout).
        const warm = asRun(
          await runChild({
            phase: "replay",
            tool: id,
            dir: dirOf(id),
            baseUrl,
            calls: settings.calls,
          }),
          `${id} warm replay round ${round + 1}`,
        );
        if (warm !== undefined) {
          if (warm.mismatches !== 0) fail(`${id} warm replay: ${warm.mismatches} answers differ`);
          collected.warmCassette.push(warm);
          log(
            `replay ${round + 1}/${settings.replayRounds} ${id} (warm cache): cold ${warm.coldMs?.toFixed(0)} ms`,
          );
        }
      }
    }
  }

  // ---- cold start: a fresh process per tool replaying its first call --------
  for (let round = 0; round < settings.coldStartRounds; round++) {
    for (const id of rotate(COLD_START_TOOLS, round)) {
      const t0 = performance.now();
      const r = asRun(
        await runChild({ phase: "replay", tool: id, dir: coldDirOf(id), baseUrl, calls: 1 }),
        `${id} cold start round ${round + 1}`,
      );
      const wallMs = performance.now() - t0;
      if (r === undefined) continue;
      if (r.mismatches !== 0) fail(`${id} cold start: the replayed answer differs`);
      collected.coldStart[id] = [...(collected.coldStart[id] ?? []), wallMs];
      log(`cold start ${round + 1}/${settings.coldStartRounds} ${id}: ${wallMs.toFixed(0)} ms`);
    }
  }
} finally {
  tripwire?.close();
  await provider?.close();
  for (const server of servers) await server.stop();
}

collected.seconds = (performance.now() - started) / 1e3;
log(`done in ${collected.seconds.toFixed(1)} s`);

const complete = TOOL_IDS.every(
  (id) => collected.record[id].length > 0 && collected.replay[id].length > 0,
);
if (flag("--json")) {
  process.stdout.write(`${JSON.stringify(collected, null, 2)}\n`);
} else if (complete && collected.direct.length > 0) {
  process.stdout.write(`${renderConsole(collected)}\n`);
}
if (complete && floorRuns.length > 0) process.stderr.write(`${renderFloor(collected)}\n`);
if (complete && writeDocs && failures.length === 0) {
  let doc = "";
  try {
    doc = readFileSync(docsPath, "utf8");
  } catch {
    // not there yet: the section starts it
  }
  writeFileSync(docsPath, withPeersSection(doc, renderDocSection(collected)));
  log(`wrote the Peers section of ${docsPath}`);
}
// The proxy servers table, in the same run (a quick run only with --servers).
if (!quick || flag("--servers")) {
  if (!(await serversTable())) failures.push("the proxy servers table: an answer check failed");
}
if (flag("--keep")) log(`recordings kept in ${root}`);
else rmSync(root, { recursive: true, force: true });
if (failures.length > 0) {
  log(`${failures.length} check(s) failed:\n${failures.map((f) => `  - ${f}`).join("\n")}`);
}
process.exitCode = failures.length > 0 || !complete ? 1 : 0;
