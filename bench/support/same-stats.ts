/**
 * bench/scale.ts and bench/scale-redis.ts `--baseline`: the stats another
 * checkout's CLI printed for the same store must be ours, or the old/new
 * ratio compares different work.
 */

/**
 * The baseline's `stats --json` and ours agree: counts and tokens exactly,
 * time and dollars to the µs and nanodollar (the baseline may sum floats).
 */
export function sameStats(oldText: string, newText: string): void {
  type Report = {
    entries: number;
    ids: number;
    recordedMs: number;
    recorded: { inputTokens: number; outputTokens: number; usd: number; unpriced: number };
    byRole: Record<string, { entries: number }>;
    byModel: Record<string, { entries: number }>;
  };
  const a = JSON.parse(oldText) as Report;
  const b = JSON.parse(newText) as Report;
  const counts = (r: Report) =>
    JSON.stringify([
      r.entries,
      r.ids,
      r.recorded.inputTokens,
      r.recorded.outputTokens,
      r.recorded.unpriced,
      Object.entries(r.byRole)
        .map(([k, g]) => [k, g.entries])
        .sort(),
      Object.entries(r.byModel)
        .map(([k, g]) => [k, g.entries])
        .sort(),
    ]);
  if (
    counts(a) !== counts(b) ||
    Math.round(a.recordedMs * 1000) !== Math.round(b.recordedMs * 1000) ||
    Math.round(a.recorded.usd * 1e9) !== Math.round(b.recorded.usd * 1e9)
  ) {
    throw new Error(`stats differ from the baseline's:\n${oldText}\n${newText}`);
  }
}
