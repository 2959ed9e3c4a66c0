/**
 * `npm run bench [-- --json] [-- name…]`: run every `bench/*.bench.ts` module
 * (or those whose file name contains one of the given words), in name order,
 * each in its own Node process, and print one table of their rows, or JSON
 * with `--json`. Exit code 1 when a module fails (a correctness check inside
 * a bench included); a missed target is reported, not fatal, since timings
 * depend on the machine.
 */
import { fork } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeMachine } from "./support/machine.js";
import type { ModuleResult } from "./support/module-process.js";
import type { BenchRow } from "./support/row.js";
import { renderTable } from "./support/table.js";

const SUFFIX = ".bench.ts";
const benchDir = dirname(fileURLToPath(import.meta.url));
const moduleProcess = join(benchDir, "support", "module-process.ts");

const args = process.argv.slice(2);
const json = args.includes("--json");
const filters = args.filter((a) => !a.startsWith("--"));
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Run one module in a fresh process (same execArgv, so `--import tsx` carries over). */
function runModule(file: string): Promise<ModuleResult> {
  return new Promise((resolve) => {
    let result: ModuleResult | undefined;
    // The module's stdout goes to our stderr: stdout carries only the table or JSON.
    const child = fork(moduleProcess, [join(benchDir, file)], { stdio: ["ignore", 2, 2, "ipc"] });
    child.on("message", (m) => {
      result = m as ModuleResult;
    });
    child.on("exit", (code, signal) => {
      resolve(result ?? { error: `process ended (${signal ?? `exit ${code}`}) without results` });
    });
  });
}

const files = readdirSync(benchDir)
  .filter((f) => f.endsWith(SUFFIX))
  .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  log(`no ${SUFFIX} module matches ${filters.join(", ")}`);
  process.exit(1);
}

const machine = describeMachine();
log(`${machine.cpu}, ${machine.cores} cores, node ${machine.node}, load ${machine.load1}`);
if (machine.load1 > machine.cores / 2) log("the machine is busy: expect noisy numbers");

const started = performance.now();
const rows: BenchRow[] = [];
const modules: { file: string; seconds: number; ok: boolean }[] = [];
for (const file of files) {
  const t0 = performance.now();
  const result = await runModule(file);
  const seconds = Number(((performance.now() - t0) / 1e3).toFixed(1));
  modules.push({ file, seconds, ok: !("error" in result) });
  if ("error" in result) log(`${file} failed after ${seconds} s: ${result.error}`);
  else {
    rows.push(...result.rows);
    log(`${file}: ${seconds} s`);
  }
}
const seconds = Number(((performance.now() - started) / 1e3).toFixed(1));
log(`done in ${seconds} s`);

process.stdout.write(
  json
    ? `${JSON.stringify({ machine, seconds, modules, rows }, null, 2)}\n`
    : `${renderTable(rows)}\n`,
);
const failed = modules.some((m) => !m.ok);
process.exitCode = failed ? 1 : 0;
