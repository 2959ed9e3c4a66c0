/**
 * `invocache stats` on real SQLite, PostgreSQL and Redis stores holding the
 * same mixed values prints the same figures, to the digit, as it printed
 * before the stores summed them themselves (the golden text below was
 * printed by the listMeta fold of the code before, and equals what reading every value prints).
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { StatsReport } from "../../src/cli/commands/stats.js";
import { runCli } from "../../src/cli/run.js";
import { type Entry, openStore } from "../../src/store/index.js";
import { mixedStatsRows } from "../../src/testing/stats-mixed.js";
import { costOf } from "../../src/usage/cost.js";
import { usePostgresServer, useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

const postgres = usePostgresServer();
const redis = useRedisServer();
const dir = tempDir("stats-backends");

/** Fill a fresh store with the mixed values of two namespaces, and one that expired. */
async function fill(url: string): Promise<void> {
  const store = openStore(url);
  try {
    for (const { key, value } of [...mixedStatsRows("alpha"), ...mixedStatsRows("beta")]) {
      await store.set(key, value);
    }
    const [gone] = mixedStatsRows("alpha", "expired");
    await store.set(gone!.key, gone!.value, { ttlMs: 1 });
  } finally {
    await store.close();
  }
  await new Promise((resolve) => setTimeout(resolve, 30));
}

async function stats(url: string, ...args: string[]): Promise<string> {
  const io = fakeIo(dir);
  const code = await runCli(["stats", "--store", url, ...args], io);
  expect(code, io.stderr()).toBe(0);
  // The header names the store (its URL as shown, password removed).
  return args.includes("--json") ? io.stdout() : io.stdout().replace(/^[^\n]*/, "STORE");
}

const GOLDEN = `STORE
  entries       32 (30 ids, 2 run records)
  size          14.6 KiB
  recorded time 44.50 s of live calls (what a full replay saves)
  recorded cost 620k tokens ($1.54 + 4 unpriced), 8 entries without usage · prices @pydantic/genai-prices@0.1.8 (2026-09-23)
  verdicts      4 accepted, 2 rejected, 26 without
  recorded      2025-12-31 23:59:59 … 2026-01-08 00:00:02

  namespace  entries     size  recorded time  recorded cost
  alpha           16  7.3 KiB        22.25 s  310k tokens ($0.772 + 2 unpriced)
  beta            16  7.3 KiB        22.25 s  310k tokens ($0.772 + 2 unpriced)

  role      entries     size  recorded time  recorded cost
  builder         8  3.6 KiB        43.51 s  607k tokens ($1.54)
  critic          8  3.8 KiB         950 ms  4.04k tokens ($0.00185 + 4 unpriced)
  planner         8  3.7 KiB          33 ms  9.18k tokens ($0.00267)
  reviewer        2    886 B         0.6 ms  4 tokens ($0.0000015)
  tools           6  2.6 KiB         6.8 ms  no usage reported

  model                                  entries     size  recorded time  recorded cost
  claude-3-5-haiku-20241022                    2  1.1 KiB         821 ms  1.88k tokens ($0.00164)
  gemini-1.5-flash                             2    964 B         8.0 ms  164 tokens ($0.0000134)
  gemini-2.5-pro                               4  1.9 KiB        40.50 s  604k tokens ($1.53)
  gpt-4o                                       4  1.8 KiB         3.01 s  2.58k tokens ($0.00729)
  gpt-4o-mini                                 10  4.5 KiB          28 ms  9.05k tokens ($0.00266 + 2 unpriced)
  openrouter:deepseek/deepseek-v4-flash        2    948 B         111 ms  2.07k tokens ($0.00021)
  sim-1                                        2    870 B          16 ms  74 tokens (price unknown)
  tool fs/read_file                            2    914 B         5.0 ms  no usage reported
  tool search                                  2    906 B         1.5 ms  no usage reported
  tool(v1, re-record) search                   2    846 B         0.3 ms  no usage reported
`;

const GOLDEN_BETA = `STORE
  entries       16 (15 ids, 1 run record)
  size          7.3 KiB
  recorded time 22.25 s of live calls (what a full replay saves)
  recorded cost 310k tokens ($0.772 + 2 unpriced), 4 entries without usage · prices @pydantic/genai-prices@0.1.8 (2026-09-23)
  verdicts      2 accepted, 1 rejected, 13 without
  recorded      2025-12-31 23:59:59 … 2026-01-08 00:00:02

  namespace  entries     size  recorded time  recorded cost
  beta            16  7.3 KiB        22.25 s  310k tokens ($0.772 + 2 unpriced)

  role      entries     size  recorded time  recorded cost
  builder         4  1.8 KiB        21.75 s  303k tokens ($0.77)
  critic          4  1.9 KiB         475 ms  2.02k tokens ($0.000923 + 2 unpriced)
  planner         4  1.9 KiB          17 ms  4.59k tokens ($0.00134)
  reviewer        1    442 B         0.3 ms  2 tokens ($7.5e-7)
  tools           3  1.3 KiB         3.4 ms  no usage reported

  model                                  entries     size  recorded time  recorded cost
  claude-3-5-haiku-20241022                    1    573 B         411 ms  940 tokens ($0.000818)
  gemini-1.5-flash                             1    481 B         4.0 ms  82 tokens ($0.00000671)
  gemini-2.5-pro                               2    948 B        20.25 s  302k tokens ($0.766)
  gpt-4o                                       2    904 B         1.50 s  1.29k tokens ($0.00364)
  gpt-4o-mini                                  5  2.3 KiB          14 ms  4.52k tokens ($0.00133 + 1 unpriced)
  openrouter:deepseek/deepseek-v4-flash        1    473 B          56 ms  1.03k tokens ($0.000105)
  sim-1                                        1    434 B         7.8 ms  37 tokens (price unknown)
  tool fs/read_file                            1    456 B         2.5 ms  no usage reported
  tool search                                  1    452 B         0.8 ms  no usage reported
  tool(v1, re-record) search                   1    422 B         0.1 ms  no usage reported
`;

describe("invocache stats on SQLite, PostgreSQL and Redis", () => {
  const urls: Array<[string, () => string, boolean]> = [
    ["sqlite", () => `sqlite://${join(dir, "mixed.sqlite")}`, false],
    ["postgres", () => postgres.url(), postgres.skip],
    ["redis", () => redis.url(), redis.skip],
  ];
  const reports = new Map<string, { human: string; json: StatsReport; beta: string }>();

  beforeAll(async () => {
    for (const [name, url, skip] of urls) {
      if (skip) continue;
      await fill(url());
      reports.set(name, {
        human: await stats(url()),
        json: JSON.parse(await stats(url(), "--json")) as StatsReport,
        beta: await stats(url(), "--namespace", "beta"),
      });
    }
  }, 120_000);

  it.each(urls)("%s prints what stats printed before", (name, _url, skip) => {
    if (skip) return;
    const { human, beta } = reports.get(name)!;
    expect(human).toBe(GOLDEN);
    expect(beta).toBe(GOLDEN_BETA);
  });

  it("every backend gives the same output, human and --json, whole and by namespace", () => {
    const [first, ...rest] = [...reports.values()];
    for (const other of rest) {
      expect(other.human).toBe(first!.human);
      expect({ ...other.json, source: "" }).toStrictEqual({ ...first!.json, source: "" });
      expect(other.beta).toBe(first!.beta);
    }
  });

  it("sums exactly: durations to the microsecond, dollars to the nanodollar of each entry", () => {
    const json = reports.get("sqlite")!.json;
    const values = [...mixedStatsRows("alpha"), ...mixedStatsRows("beta")]
      .map((r) => r.value as unknown as Entry)
      .filter((v) => v.meta?.recordedAt !== undefined);
    const us = values.reduce((s, v) => s + Math.round(v.meta.durationMs * 1000), 0);
    expect(json.recordedMs).toBe(us / 1000);
    let nano = 0;
    for (const v of values) {
      if (v.meta.usage === undefined) continue;
      const cost = costOf((v.manifest as { model?: string }).model, v.meta.usage);
      if (cost !== undefined) nano += Math.round(cost.usd * 1e9);
    }
    expect(json.recorded.usd).toBe(nano / 1e9);
    expect(json.entries).toBe(32);
    expect(json.problems).toBe(2);
  });
});
