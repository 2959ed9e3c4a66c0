/**
 * A bench result row: one measurement of invocache beside a baseline measured
 * in the same process run, their ratio, and whether it meets its target.
 * Every `bench/*.bench.ts` module returns a list of these.
 */

/** Whether a bigger number is better (throughput) or a smaller one (latency). */
export type Better = "higher" | "lower";

export interface BenchRow {
  /** The bench module the row came from, e.g. `identity`. */
  suite: string;
  /** What was measured, e.g. `normalizePrompt, 100 KiB prompt`. */
  measurement: string;
  /** Unit of `invocache` and `baseline`, e.g. `MB/s` (10^6 bytes) or `µs/call`. */
  unit: string;
  better: Better;
  /** Median of invocache's samples; null when skipped. */
  invocache: number | null;
  /** Median of the baseline's samples; null when skipped. */
  baseline: number | null;
  /** What the baseline is, in a few words. */
  baselineName: string;
  /** invocache / baseline, or null when skipped. */
  ratio: number | null;
  /** The ratio to meet: at least it when `better` is `higher`, at most it when `lower`. */
  target: number;
  status: "PASS" | "MISS" | "SKIP";
  /** Interquartile range of the samples over their median, per side: how noisy the run was. */
  spread?: { invocache: number; baseline: number };
  /** Anything a reader needs to interpret the row (sizes, sample counts, why skipped). */
  note?: string;
}

/** Everything about a row except what {@link compare} works out. */
export type RowInput = Omit<BenchRow, "ratio" | "status" | "invocache" | "baseline" | "spread">;

/** Build a row from two medians: the ratio is always invocache / baseline. */
export function compare(
  row: RowInput,
  invocache: number,
  baseline: number,
  spread?: BenchRow["spread"],
): BenchRow {
  const ratio = invocache / baseline;
  const pass = row.better === "higher" ? ratio >= row.target : ratio <= row.target;
  return {
    ...row,
    invocache,
    baseline,
    ratio,
    status: pass ? "PASS" : "MISS",
    ...(spread === undefined ? {} : { spread }),
  };
}

/** A row that could not be measured here, with the reason. */
export function skipped(row: RowInput, reason: string): BenchRow {
  return { ...row, invocache: null, baseline: null, ratio: null, status: "SKIP", note: reason };
}
