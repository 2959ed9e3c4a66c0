/**
 * Tool calls: a replayed tool call (wrapTool in replay mode: tool identity,
 * store read, envelope check, copy) beside calling the wrapped function
 * directly, interleaved call by call. The function is a realistic read-only
 * tool: it reads a 4 KiB file and returns its text as JSON. Stores: memory
 * and SQLite (a real file).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRecorder, wrapTool } from "../src/index.js";
import type { Store } from "../src/store/types.js";
import { type BenchRow, compare, type RowInput } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const CALLS = 3_000;
const WARMUP = 300;

const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export default async function toolsBench(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "invocache-bench-tools-"));
  const file = join(dir, "notes.txt");
  writeFileSync(file, "a line of notes\n".repeat(256));
  const readNotes = async ({ path }: { path: string }) => ({
    path,
    text: await readFile(path, "utf8"),
  });
  const rows: BenchRow[] = [];
  try {
    for (const [name, url] of [
      ["memory", "memory://"],
      ["sqlite", `sqlite://${join(dir, "bench.sqlite")}`],
    ] as const) {
      const recorder = createRecorder({ store: url, mode: "record", env: {} });
      await wrapTool(readNotes, { name: "read_notes", recorder, readOnlyHint: true })({
        path: file,
      });
      const replay = createRecorder({ store: recorder.store as Store, mode: "replay", env: {} });
      const replayed = wrapTool(readNotes, {
        name: "read_notes",
        recorder: replay,
        readOnlyHint: true,
      });
      const ours: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < WARMUP + CALLS; i++) {
        const order = i % 2 === 0 ? [0, 1] : [1, 0];
        for (const which of order) {
          const t0 = process.hrtime.bigint();
          if (which === 0) await replayed({ path: file });
          else await readNotes({ path: file });
          const us = Number(process.hrtime.bigint() - t0) / 1e3;
          if (i >= WARMUP) (which === 0 ? ours : direct).push(us);
        }
      }
      if (replay.stats.hits !== WARMUP + CALLS)
        throw new Error(`${name}: not every tool call was a hit`);
      ours.sort((a, b) => a - b);
      direct.sort((a, b) => a - b);
      ctx.log(
        `${name}: replayed tool p50 ${pct(ours, 0.5).toFixed(1)} µs vs direct ${pct(direct, 0.5).toFixed(1)} µs`,
      );
      const row = (what: string, target: number): RowInput => ({
        suite: "tools",
        measurement: `replayed tool call ${what}, ${name}`,
        unit: "µs",
        better: "lower",
        baselineName: "calling the wrapped function directly (reads a 4 KiB file)",
        target,
        note: `${CALLS} interleaved calls after ${WARMUP} warmup`,
      });
      rows.push(compare(row("p50", 2), pct(ours, 0.5), pct(direct, 0.5)));
      rows.push(compare(row("p99", 3), pct(ours, 0.99), pct(direct, 0.99)));
      await replay.close();
      await recorder.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
