/**
 * `node --import tsx bench/peers/cold-start.ts [--rounds N]`: cold start as a
 * whole process. Each tool records the first 100 calls of the peers workload
 * (bench/peers/workload.ts) against the loopback fake provider; then, with
 * the provider stopped, each round starts one fresh process per tool that
 * imports the tool, opens the recording and replays the first call (the
 * `replay` task of child.ts with one call), in rotated order. Reported per
 * tool, median over the rounds: the process's wall time from spawn to exit
 * (node, the harness and the openai SDK are the same for every tool), its
 * time from process start to the first answer (`performance.timeOrigin`),
 * and its peak RSS. Target: invocache's whole-process time ≤ nock.back's.
 *
 * Each process is plain `node` (no tsx) running the harness bundled once
 * for the run (harness.ts: child.ts as one ES module, packages from
 * node_modules, invocache from its compiled package dist/, built first when
 * older than src/), the same for every tool, as a user's process runs it;
 * `--sources` runs child.ts under tsx with invocache's TypeScript sources
 * instead (which adds tsx's per-module round trip to its loader thread,
 * paid by invocache's ESM files far more than by CommonJS nock).
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import type { ChildResult, ChildTask, RunResult } from "./child.js";
import { type CompiledHarness, compileHarness } from "./harness.js";
import type { ToolId } from "./tools.js";

const CALLS = 100;
const i = process.argv.indexOf("--rounds");
const rounds = i < 0 ? 7 : Number(process.argv[i + 1]);
const fromSources = process.argv.includes("--sources");
const harness: CompiledHarness = fromSources
  ? { path: join(dirname(fileURLToPath(import.meta.url)), "child.ts"), env: {} }
  : await compileHarness((line) => process.stderr.write(`[cold] ${line}\n`));
const tools: ToolId[] = ["invocache-cassette", "invocache-sqlite", "nock-back"];
const labels: Record<string, string> = {
  "invocache-cassette": "invocache (cassette)",
  "invocache-sqlite": "invocache (SQLite)",
  "nock-back": "nock.back",
};

function runChild(task: ChildTask): Promise<{ result: ChildResult; wallMs: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let result: ChildResult = { phase: "error", error: "no result" };
    let output = "";
    const child = fork(harness.path, [JSON.stringify(task)], {
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // Plain node for the bundled harness: not this process's `--import tsx`.
      ...(fromSources ? {} : { execArgv: [] }),
      env: { ...process.env, ...harness.env },
    });
    child.stdout?.on("data", (c: Buffer) => (output += c));
    child.stderr?.on("data", (c: Buffer) => (output += c));
    child.on("message", (m) => (result = m as ChildResult));
    child.on("exit", () => {
      if (result.phase === "error") result.error += `\n${output}`;
      resolve({ result, wallMs: performance.now() - t0 });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const root = mkdtempSync(join(tmpdir(), "invocache-cold-"));
try {
  process.stderr.write(`[cold] load average ${loadavg()[0]!.toFixed(2)}\n`);
  const provider = await startFakeProvider();
  const baseUrl = `${provider.url}/v1`;
  for (const tool of tools) {
    const { result } = await runChild({
      phase: "record",
      tool,
      dir: join(root, tool),
      baseUrl,
      calls: CALLS,
    });
    if (result.phase === "error") throw new Error(`${tool} record: ${result.error}`);
  }
  await provider.close(); // replays must not reach it: a call that tries fails
  const seen = new Map<ToolId, { wall: number[]; first: number[]; rss: number[] }>();
  for (let r = 0; r < rounds; r++) {
    const order = [...tools.slice(r % tools.length), ...tools.slice(0, r % tools.length)];
    for (const tool of order) {
      const { result, wallMs } = await runChild({
        phase: "replay",
        tool,
        dir: join(root, tool),
        baseUrl,
        calls: 1,
      });
      if (result.phase !== "replay") {
        throw new Error(`${tool} replay: ${"error" in result ? result.error : result.phase}`);
      }
      const run = result as RunResult;
      if (run.mismatches !== 0) throw new Error(`${tool}: the replayed answer differs`);
      const s = seen.get(tool) ?? { wall: [], first: [], rss: [] };
      s.wall.push(wallMs);
      s.first.push(run.processColdMs!);
      s.rss.push(run.maxRssKiB / 1024);
      seen.set(tool, s);
    }
  }
  const nock = seen.get("nock-back")!;
  const lines = [
    `Cold start, ${CALLS}-entry recording, median of ${rounds} processes per tool, ${fromSources ? "child.ts under tsx, invocache from its sources" : "plain node, bundled harness, invocache from dist/"} (load average ${loadavg()[0]!.toFixed(2)}):`,
    "",
    "| tool | process wall time | start to first answer | peak RSS | wall vs nock.back | result |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const tool of tools) {
    const s = seen.get(tool)!;
    const ratio = median(s.wall) / median(nock.wall);
    lines.push(
      `| ${labels[tool]} | ${median(s.wall).toFixed(0)} ms | ${median(s.first).toFixed(0)} ms | ${median(s.rss).toFixed(0)} MiB | ${ratio.toFixed(2)}× | ${tool === "nock-back" ? "" : ratio <= 1 ? "PASS" : "MISS"} |`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
