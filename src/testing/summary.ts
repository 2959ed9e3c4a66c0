/**
 * The test-run summary of `invocache/vitest`: one line at the end of the
 * run, with the calls replayed, the upstream calls made, the misses (and the
 * command that re-records them) and the tokens, dollars and model time the
 * replays saved.
 *
 * Tests run in workers; each `withCassette` test leaves its recorder's
 * accounts in the test's `meta` (vitest sends it to the main process), and
 * {@link InvocacheReporter}, added to `reporters`, adds them up.
 *
 * ```ts
 * // vitest.config.ts
 * import { InvocacheReporter } from "invocache/vitest";
 * export default { test: { reporters: ["default", new InvocacheReporter()] } };
 * ```
 */
import type { RecorderStats } from "../recorder/index.js";
import { emptyTally, formatSpend, PRICE_SNAPSHOT, type Spend, type Tally } from "../usage/index.js";

/** What one test leaves in `ctx.task.meta.invocache`. */
export interface TestAccounts {
  tally: Tally;
  /** The command that re-records this test, when it missed in replay mode. */
  rerecord?: string;
}

/** The totals the reporter prints. */
export interface RunSummary extends Tally {
  tests: number;
  /** Re-record commands of the tests that missed in replay mode (deduplicated). */
  rerecord: string[];
}

/** A test's accounts as a JSON value for `meta` (a recorder's stats, without the groups). */
export function testAccounts(stats: Readonly<RecorderStats>, rerecord?: string): TestAccounts {
  const { calls, hits, misses, upstreamCalls, spent, saved } = stats;
  return {
    tally: { calls, hits, misses, upstreamCalls, spent: { ...spent }, saved: { ...saved } },
    ...(rerecord === undefined ? {} : { rerecord }),
  };
}

function addSpend(into: Spend, s: Spend): void {
  into.inputTokens += s.inputTokens;
  into.outputTokens += s.outputTokens;
  into.usd = Math.round((into.usd + s.usd) * 1e9) / 1e9;
  into.unpriced += s.unpriced;
  into.noUsage += s.noUsage;
}

/** Add up the accounts the tests left. */
export function summarize(tests: Iterable<TestAccounts>): RunSummary {
  const total: RunSummary = { ...emptyTally(), tests: 0, rerecord: [] };
  for (const t of tests) {
    total.tests++;
    total.calls += t.tally.calls;
    total.hits += t.tally.hits;
    total.misses += t.tally.misses;
    total.upstreamCalls += t.tally.upstreamCalls;
    addSpend(total.spent, t.tally.spent);
    addSpend(total.saved, t.tally.saved);
    total.saved.ms = Math.round((total.saved.ms + t.tally.saved.ms) * 1000) / 1000;
    if (t.rerecord !== undefined && !total.rerecord.includes(t.rerecord))
      total.rerecord.push(t.rerecord);
  }
  return total;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/**
 * The summary line (and, under it, one re-record command per missing test).
 *
 * @example
 * formatRunSummary(summary)
 * // "invocache: 12 calls replayed, 0 upstream calls, 0 misses · saved 8.1k tokens ($0.0021), 6.20 s of model time"
 */
export function formatRunSummary(s: RunSummary): string {
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  const head =
    `invocache: ${plural(s.hits, "call")} replayed, ${plural(s.upstreamCalls, "upstream call")}, ` +
    `${plural(s.misses, "miss", "misses")} · saved ${formatSpend(s.saved)}, ${seconds(s.saved.ms)} of model time` +
    (s.saved.usd > 0 || s.spent.usd > 0 ? ` (prices of ${PRICE_SNAPSHOT.date})` : "");
  if (s.rerecord.length === 0) return head;
  return `${head}\n${s.rerecord.map((c) => `  re-record: ${c}`).join("\n")}`;
}

/** The key of `ctx.task.meta` the accounts go under. */
export const META_KEY = "invocache";

/** Options of {@link InvocacheReporter}. */
export interface InvocacheReporterOptions {
  /** Print the summary. Default true; `false` (or `INVOCACHE_SUMMARY=0`) turns it off. */
  enabled?: boolean;
  /** Where the line goes. Default stdout. */
  print?: (text: string) => void;
}

interface ReportedTest {
  meta(): Record<string, unknown>;
}
interface ReportedModule {
  children: { allTests(): Iterable<ReportedTest> };
}

/**
 * A vitest reporter that prints the invocache summary at the end of a run.
 * Only tests that used `withCassette` count; a run without them prints nothing.
 */
export class InvocacheReporter {
  readonly #enabled: boolean;
  readonly #print: (text: string) => void;

  constructor(options: InvocacheReporterOptions = {}) {
    this.#enabled = options.enabled ?? process.env.INVOCACHE_SUMMARY !== "0";
    this.#print = options.print ?? ((text) => process.stdout.write(`${text}\n`));
  }

  onTestRunEnd(modules: ReadonlyArray<ReportedModule>): void {
    if (!this.#enabled) return;
    const found: TestAccounts[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const a = t.meta()[META_KEY] as TestAccounts | undefined;
        if (a !== undefined && typeof a === "object" && a.tally !== undefined) found.push(a);
      }
    }
    if (found.length === 0) return;
    this.#print(formatRunSummary(summarize(found)));
  }
}
