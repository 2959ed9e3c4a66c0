/**
 * Runs one `bench/*.bench.ts` module in this (child) process and sends its
 * rows to the parent over IPC. `bench/run.ts` starts one process per module,
 * so one module's heap, V8 flags or JIT state cannot skew the next one's
 * numbers.
 */
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import type { BenchRow } from "./row.js";
import type { BenchFunction } from "./run-context.js";

/** What a module process reports. */
export type ModuleResult = { rows: BenchRow[] } | { error: string };

const file = process.argv[2];
const send = (result: ModuleResult) =>
  new Promise<void>((resolve) => process.send?.(result, () => resolve()) ?? resolve());

if (file === undefined || process.send === undefined) {
  process.stderr.write("usage: forked by bench/run.ts with a module path\n");
  process.exit(2);
}

const suite = basename(file, ".bench.ts");
const log = (line: string) => process.stderr.write(`[bench] ${suite}: ${line}\n`);
try {
  const mod = (await import(pathToFileURL(file).href)) as { default?: BenchFunction };
  if (typeof mod.default !== "function") {
    throw new Error("no default export: a bench module exports a function returning rows");
  }
  await send({ rows: await mod.default({ log }) });
} catch (e) {
  await send({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
}
process.exit(0);
