/**
 * Recorder hit path: latency p50/p99 of a replayed call (identity, store read,
 * envelope check, copy) beside a raw keyv `get` of the same key on the same
 * backend and beside its limit (the identity of the same request plus one
 * raw get, target 1.2x), interleaved call by call; p99 against p50 (target
 * 3x); store operations per hit, counted through a wrapping Store (the limit
 * is one read and no write); and replayed calls per second.
 * Stores: memory, SQLite (a real file), Redis (a real redis-server on
 * 127.0.0.1 when installed), Postgres (a throwaway cluster when installed).
 * SQLite through the optional better-sqlite3 driver too, when
 * INVOCACHE_BETTER_SQLITE3 names a build of it (a package directory).
 * Then the memory hit path with OpenTelemetry on (the API's no-op tracer, and
 * a real SDK tracer exporting to memory) beside the same recorder with
 * `telemetry: false`.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { createRecorder, invocationIdentity } from "../src/index.js";
import type { Backend } from "../src/store/backend.js";
import { createBetterSqliteBackend } from "../src/store/backends/better-sqlite3.js";
import { createMemoryBackend } from "../src/store/backends/memory.js";
import { createPostgresBackend } from "../src/store/backends/postgres.js";
import { createRedisBackend } from "../src/store/backends/redis.js";
import { createSqliteBackend } from "../src/store/backends/sqlite.js";
import { entryKey } from "../src/store/index.js";
import type { Store } from "../src/store/types.js";
import { countingStore, readsOf, writesOf } from "../test/helpers/counting-store.js";
import { postgresAvailable, startPostgresServer } from "../test/helpers/postgres-server.js";
import { redisServerBinary, startRedisServer } from "../test/helpers/redis-server.js";
import {
  BETTER_SQLITE3_BUILD,
  betterSqliteStore,
  loadBetterSqlite3Build,
} from "./support/better-sqlite3-store.js";
import { machine, req, response } from "./support/hit-request.js";
import { type BenchRow, compare, type RowInput, skipped } from "./support/row.js";
import type { BenchContext } from "./support/run-context.js";

const CALLS = 3_000;
/**
 * Calls before the measured ones: enough for the steady state. With 300,
 * the measured calls still included the recorder's own code warming up
 * (its ratio to the limit read 1.25–1.34× over the first 3,300 calls and
 * 1.15–1.18× over the next ones, same process). Past the 4,096 calls a
 * recorder keeps unpriced (src/usage/summary.ts), so every measured call
 * is in the same pricing regime (the table loaded, each call priced at once).
 */
const WARMUP = 5_000;

interface Target {
  name: string;
  url: string;
  /** Opens the recorder's store, when not by `url` alone (another driver). */
  open?: () => Store;
  raw: () => Promise<Backend>;
  cleanup?: () => Promise<void>;
}

const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function measure(t: Target, ctx: BenchContext): Promise<BenchRow[]> {
  const recorder = createRecorder({
    store: t.open?.() ?? t.url,
    mode: "auto",
    identity: machine,
  });
  await recorder.call(req, async () => response);
  // The replay side goes through a counting wrapper: store operations per hit
  // are counted (the limit is one read), not inferred from timings.
  const counting = countingStore(recorder.store as Store);
  const replay = createRecorder({ store: counting.store, mode: "replay", identity: machine });
  const backend = await t.raw();
  const key = entryKey("default", invocationIdentity(req, machine), 0);
  if ((await backend.keyv.get(backend.keyPrefix + key)) === undefined)
    throw new Error(`${t.name}: raw get misses`);

  const ours: number[] = [];
  const raw: number[] = [];
  const floor: number[] = [];
  const contenders: (() => Promise<unknown>)[] = [
    () => replay.call(req, async () => response),
    () => backend.keyv.get(backend.keyPrefix + key),
    // The limit of a hit: the identity of the same request and one raw get.
    () => {
      invocationIdentity(req, machine);
      return backend.keyv.get(backend.keyPrefix + key);
    },
  ];
  const into = [ours, raw, floor];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    if (i === WARMUP) counting.reset();
    // Rotate which goes first so drift hits all alike.
    for (let j = 0; j < contenders.length; j++) {
      const which = (i + j) % contenders.length;
      const t0 = process.hrtime.bigint();
      await contenders[which]!();
      const ns = Number(process.hrtime.bigint() - t0);
      if (i >= WARMUP) into[which]!.push(ns / 1e3);
    }
  }
  ours.sort((a, b) => a - b);
  raw.sort((a, b) => a - b);
  floor.sort((a, b) => a - b);
  if (replay.stats.hits !== WARMUP + CALLS) throw new Error(`${t.name}: not every call was a hit`);
  const reads = readsOf(counting.counts) / CALLS;
  const writes = writesOf(counting.counts) / CALLS;
  ctx.log(
    `${t.name}: p50 ${pct(ours, 0.5).toFixed(1)} µs vs raw ${pct(raw, 0.5).toFixed(1)} µs, identity+raw ${pct(floor, 0.5).toFixed(1)} µs; ${reads} reads, ${writes} writes per hit`,
  );

  const note = `${CALLS} interleaved calls after ${WARMUP} warmup; 1 KiB prompt, 2 KiB response`;
  const row = (what: string, target: number): RowInput => ({
    suite: "recorder",
    measurement: `${what}, ${t.name}`,
    unit: what.includes("/s") ? "calls/s" : "µs",
    better: what.includes("/s") ? "higher" : "lower",
    baselineName: `raw keyv get of the same entry (${t.name})`,
    target,
    note,
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const rows = [
    compare(row("hit latency p50", 1.5), pct(ours, 0.5), pct(raw, 0.5)),
    compare(row("hit latency p99", 1.5), pct(ours, 0.99), pct(raw, 0.99)),
    compare(
      {
        ...row("hit latency p50 vs its limit", 1.2),
        baselineName: `invocationIdentity of the same request + one raw keyv get (${t.name})`,
      },
      pct(ours, 0.5),
      pct(floor, 0.5),
    ),
    compare(
      { ...row("hit latency p99 vs p50", 3), baselineName: "the same hits' p50" },
      pct(ours, 0.99),
      pct(ours, 0.5),
    ),
    // The backend alone, to read the row above by: a hit makes one read, so
    // its tail is at least that read's; when this row misses, the tail is the
    // backend's (thread-pool hops, a server's scheduling), not the recorder's.
    compare(
      {
        ...row("raw get p99 vs p50 (the backend's own tail)", 3),
        baselineName: `the same raw keyv gets' p50 (${t.name})`,
      },
      pct(raw, 0.99),
      pct(raw, 0.5),
    ),
    compare(
      {
        ...row("store reads per hit", 1),
        unit: "ops",
        baselineName: "one read (the limit)",
        note: `counted through a wrapping Store over ${CALLS} hits; writes per hit: ${writes} (must be 0)`,
      },
      reads + writes,
      1,
    ),
    compare(
      row("replayed calls/s (sequential)", 1 / 1.5),
      (CALLS * 1e6) / sum(ours),
      (CALLS * 1e6) / sum(raw),
    ),
  ];
  await backend.close();
  await replay.close();
  await recorder.close();
  await t.cleanup?.();
  return rows;
}

/** Hit latency with telemetry off, on with the no-op API, and on with an in-memory SDK tracer, interleaved. */
async function measureTelemetry(ctx: BenchContext): Promise<BenchRow[]> {
  const source = createRecorder({ store: "memory://", mode: "auto", identity: machine });
  await source.call(req, async () => response);
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const make = (telemetry: false | true | { tracerProvider: BasicTracerProvider }) =>
    createRecorder({ store: source.store, mode: "replay", identity: machine, telemetry });
  const variants = [
    { name: "off", recorder: make(false), times: [] as number[] },
    { name: "no-op tracer", recorder: make(true), times: [] as number[] },
    { name: "in-memory SDK tracer", recorder: make({ tracerProvider }), times: [] as number[] },
  ];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(i + k) % variants.length]!; // rotate who goes first
      const t0 = process.hrtime.bigint();
      await v.recorder.call(req, async () => response);
      const ns = Number(process.hrtime.bigint() - t0);
      if (i >= WARMUP) v.times.push(ns / 1e3);
    }
    if (i % 500 === 0) exporter.reset(); // keep memory flat
  }
  const spans = exporter.getFinishedSpans().length;
  if (spans === 0 && CALLS > 500) throw new Error("telemetry: the SDK tracer recorded no span");
  for (const v of variants) {
    v.times.sort((a, b) => a - b);
    if (v.recorder.stats.hits !== WARMUP + CALLS)
      throw new Error(`telemetry ${v.name}: not every call was a hit`);
  }
  const [off, noop, sdk] = variants as [
    (typeof variants)[0],
    (typeof variants)[0],
    (typeof variants)[0],
  ];
  ctx.log(
    `telemetry: p50 off ${pct(off.times, 0.5).toFixed(1)} µs, no-op ${pct(noop.times, 0.5).toFixed(1)} µs, SDK ${pct(sdk.times, 0.5).toFixed(1)} µs`,
  );
  const row = (what: string, target: number): RowInput => ({
    suite: "recorder",
    measurement: `hit latency p50, memory, OpenTelemetry ${what}`,
    unit: "µs",
    better: "lower",
    baselineName: "the same recorder with telemetry: false",
    target,
    note: `${CALLS} interleaved calls after ${WARMUP} warmup; a span and counters per call`,
  });
  const rows = [
    compare(row("no-op tracer", 1.05), pct(noop.times, 0.5), pct(off.times, 0.5)),
    compare(row("in-memory SDK tracer", 2), pct(sdk.times, 0.5), pct(off.times, 0.5)),
  ];
  for (const v of variants) await v.recorder.close();
  await source.close();
  await tracerProvider.shutdown();
  return rows;
}

export default async function recorderBench(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "invocache-bench-"));
  const rows: BenchRow[] = [];
  try {
    // memory:// stores are private per handle, so the raw side reads a second
    // memory backend holding the same serialized entry.
    const memRaw = await createMemoryBackend();
    const targets: Target[] = [
      {
        name: "memory",
        url: "memory://",
        raw: async () => {
          const src = createRecorder({ store: "memory://", mode: "auto", identity: machine });
          await src.call(req, async () => response);
          const key = entryKey("default", invocationIdentity(req, machine), 0);
          await memRaw.keyv.set(key, await src.store.get(key));
          await src.close();
          return memRaw;
        },
      },
      {
        name: "sqlite",
        url: `sqlite://${join(dir, "bench.sqlite")}`,
        raw: () => createSqliteBackend(join(dir, "bench.sqlite")),
      },
    ];
    // The optional better-sqlite3 driver, when a build is named (it is not a
    // dependency: see docs/performance.md, "SQLite drivers").
    if (BETTER_SQLITE3_BUILD !== undefined) {
      const file = join(dir, "bench-better.sqlite");
      targets.push({
        name: "sqlite (better-sqlite3)",
        url: `sqlite://${file}`,
        open: () => betterSqliteStore(file),
        raw: () => createBetterSqliteBackend(file, loadBetterSqlite3Build),
      });
    }
    for (const t of targets) rows.push(...(await measure(t, ctx)));
    rows.push(...(await measureTelemetry(ctx)));

    if (redisServerBinary === undefined) {
      for (const what of ["hit latency p50", "hit latency p99"]) {
        rows.push(
          skipped(
            {
              suite: "recorder",
              measurement: `${what}, redis`,
              unit: "µs",
              better: "lower",
              baselineName: "raw keyv get",
              target: 1.5,
            },
            "redis-server not installed",
          ),
        );
      }
    } else {
      const redis = await startRedisServer();
      rows.push(
        ...(await measure(
          {
            name: "redis",
            url: redis.url,
            raw: () => createRedisBackend(redis.url, redis.url),
            cleanup: () => redis.stop(),
          },
          ctx,
        )),
      );
    }
    if (!postgresAvailable) {
      rows.push(
        skipped(
          {
            suite: "recorder",
            measurement: "hit latency p50 vs its limit, postgres",
            unit: "µs",
            better: "lower",
            baselineName: "identity + one raw keyv get",
            target: 1.2,
          },
          "postgres (initdb) not installed",
        ),
      );
    } else {
      const pg = await startPostgresServer();
      rows.push(
        ...(await measure(
          {
            name: "postgres",
            url: pg.url,
            raw: () => createPostgresBackend(pg.url, pg.url),
            cleanup: () => pg.stop(),
          },
          ctx,
        )),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
