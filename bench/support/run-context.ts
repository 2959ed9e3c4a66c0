/**
 * The contract between `bench/run.ts` and each `bench/*.bench.ts` module: the
 * module's default export takes a context and resolves to its result rows.
 */
import type { BenchRow } from "./row.js";

export interface BenchContext {
  /** Progress for humans, on stderr (stdout stays the table or the JSON). */
  log(line: string): void;
}

export type BenchFunction = (ctx: BenchContext) => Promise<BenchRow[]> | BenchRow[];
