/**
 * The summary line for runners without a reporter we plug into (Jest,
 * node:test): each test's accounts are kept in the test file's process (or
 * module registry), and the runner's after-all hook prints one line for the
 * file. vitest sums the whole run instead (InvocacheReporter, summary.ts).
 */
import { formatRunSummary, summarize, type TestAccounts } from "./summary.js";

/** The accounts of this file's `withCassette` tests, and their line. */
export interface FileSummary {
  keep(accounts: TestAccounts): void;
  /** The summary line (with re-record commands), or undefined when no test used a cassette. */
  line(): string | undefined;
}

export function fileSummary(): FileSummary {
  const tests: TestAccounts[] = [];
  return {
    keep: (accounts) => {
      tests.push(accounts);
    },
    line: () => (tests.length === 0 ? undefined : formatRunSummary(summarize(tests))),
  };
}

/** Summaries are on unless `INVOCACHE_SUMMARY=0` (as for vitest's InvocacheReporter). */
export function summaryWanted(env: Record<string, string | undefined> = process.env): boolean {
  return env.INVOCACHE_SUMMARY !== "0";
}
