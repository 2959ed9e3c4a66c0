/**
 * Soak: N processes × M recorder calls in auto mode over one shared store
 * (one SQLite file; one Redis), a quarter of each process's identities
 * shared with every other process. Proves, at volume: exactly one upstream
 * call per identity (cross-process single-flight), zero lost entries, the
 * same answer everywhere, and no store error (SQLITE_BUSY…) ever reaching a
 * caller or even a warning event.
 *
 * `npm test` runs the fast form (4 × 200). The full form, 8 × 2,000, runs with
 * INVOCACHE_SOAK=1 (`npm run soak`); INVOCACHE_SOAK_PROCESSES and
 * INVOCACHE_SOAK_CALLS override the sizes.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { entryPrefix } from "../../src/store/index.js";
import { useRedisServer } from "../helpers/servers.js";
import { startUpstream, startWorker, tempDir, type Upstream, workerScript } from "./helpers.js";

const FULL = process.env.INVOCACHE_SOAK === "1";
const PROCESSES = Number(process.env.INVOCACHE_SOAK_PROCESSES ?? (FULL ? 8 : 4));
const CALLS = Number(process.env.INVOCACHE_SOAK_CALLS ?? (FULL ? 2_000 : 200));
const LANES = 8;
const SHARED = Math.floor(CALLS / 4);
const DISTINCT = SHARED + PROCESSES * (CALLS - SHARED);
const TIMEOUT = FULL ? 30 * 60_000 : 45_000;

interface Report {
  worker: number;
  ms: number;
  answers: Record<string, string>;
  errors: Array<{ id: string; name: string; code?: string; message: string }>;
  warnings: Array<{ message: string; error?: string }>;
  stats: { hits: number; misses: number; recorded: number; bypassed: number };
}

const dir = tempDir("soak");
let upstream: Upstream;
beforeAll(async () => {
  // A few milliseconds per call: shared identities overlap between processes.
  upstream = await startUpstream({ delayMs: 3 });
});
afterAll(() => upstream?.close());

async function soak(storeUrl: string, namespace: string): Promise<void> {
  upstream.reset();
  const started = performance.now();
  const workers = Array.from({ length: PROCESSES }, (_, w) =>
    startWorker(workerScript("soak-worker.ts"), [
      storeUrl,
      upstream.url,
      String(w),
      String(CALLS),
      namespace,
      String(LANES),
    ]),
  );
  await Promise.all(workers.map((w) => w.line((l) => l === "ready", 60_000)));
  for (const w of workers) w.child.stdin!.end("go\n");
  const reports = await Promise.all(
    workers.map(async (w, i) => {
      const { code, stderr } = await w.exited;
      expect(code, `worker ${i} exit code; stderr: ${stderr}`).toBe(0);
      return JSON.parse(w.lines.at(-1)!) as Report;
    }),
  );
  const wall = performance.now() - started;

  // Nothing failed, and nothing was even bypassed: no SQLITE_BUSY, no StoreError.
  expect(reports.flatMap((r) => r.errors)).toStrictEqual([]);
  expect(reports.flatMap((r) => r.warnings)).toStrictEqual([]);
  expect(reports.reduce((n, r) => n + r.stats.bypassed, 0)).toBe(0);

  // Exactly one upstream call per identity, counted at the upstream.
  expect(upstream.calls.size).toBe(DISTINCT);
  const repeated = [...upstream.calls].filter(([, n]) => n !== 1);
  expect(repeated, "identities called upstream more than once").toStrictEqual([]);
  expect(reports.reduce((n, r) => n + r.stats.recorded, 0)).toBe(DISTINCT);
  expect(reports.reduce((n, r) => n + r.stats.hits, 0)).toBe(PROCESSES * CALLS - DISTINCT);

  // Every process got the one recorded answer for each shared identity.
  for (let s = 0; s < SHARED; s++) {
    const seen = new Set(reports.map((r) => r.answers[`s-${s}`]));
    expect([...seen], `answers for s-${s}`).toStrictEqual([`s-${s}#1`]);
  }

  // Zero lost entries: the store holds exactly one entry per identity, and a
  // replay recorder serves each with the answer its process saw.
  const replay = createRecorder({
    store: storeUrl,
    mode: "replay",
    namespace,
    identity: { homeDir: "/home/u", tmpDirs: ["/tmp"] },
  });
  try {
    let entries = 0;
    for await (const _ of replay.store.list(entryPrefix(namespace))) entries++;
    expect(entries).toBe(DISTINCT);
    const expected = new Map<string, string>();
    for (const r of reports)
      for (const [id, answer] of Object.entries(r.answers)) expected.set(id, answer);
    expect(expected.size).toBe(DISTINCT);
    const lost: string[] = [];
    for (const [id, answer] of expected) {
      const out = await replay.call(
        { role: "soak", model: "m", prompt: `call ${id}`, task: "soak" },
        async () => {
          throw new Error(`replay went upstream for ${id}`);
        },
      );
      if ((out as { answer: string }).answer !== answer) lost.push(id);
    }
    expect(lost).toStrictEqual([]);
  } finally {
    await replay.close();
  }
  const slowest = Math.max(...reports.map((r) => r.ms));
  console.log(
    `soak ${storeUrl.split(":")[0]}: ${PROCESSES} processes x ${CALLS} calls, ${DISTINCT} identities, ` +
      `${Math.round(wall)} ms wall, slowest process ${Math.round(slowest)} ms ` +
      `(${Math.round((PROCESSES * CALLS) / (slowest / 1000))} calls/s overall)`,
  );
}

describe("soak: processes x calls on one shared store, a quarter of the identities shared", () => {
  it(
    "one SQLite file: one upstream call per identity, zero lost entries, no SQLITE_BUSY surfaced",
    async () => {
      await soak(`sqlite://${join(dir, "soak.sqlite")}`, "soak");
    },
    TIMEOUT,
  );

  const redis = useRedisServer();
  describe.skipIf(redis.skip)("on Redis", () => {
    it(
      "one Redis: one upstream call per identity, zero lost entries, no StoreError surfaced",
      async () => {
        await soak(redis.url(), "soak");
      },
      TIMEOUT,
    );
  });
});
