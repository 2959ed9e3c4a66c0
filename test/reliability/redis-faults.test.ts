/**
 * Redis killed mid-run (SIGKILL, with calls in flight) and brought back on
 * the same port with its data: auto mode fails open (every call is answered
 * from upstream, each store failure a `warning` event, never an error to the
 * caller), then hits again once Redis answers; replay mode fails closed with
 * a StoreError that names the store, never a ReplayMissError.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRecorder, type Recorder, ReplayMissError, StoreError } from "../../src/index.js";
import { redisServerBinary } from "../helpers/redis-server.js";
import { skipUnless } from "../helpers/service.js";
import {
  type DurableRedis,
  type ErrorInfo,
  errorInfo,
  startDurableRedis,
  startUpstream,
  tempDir,
  type Upstream,
  until,
} from "./helpers.js";

const IDENTITY = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const skip = skipUnless(
  redisServerBinary !== undefined,
  "redis-server",
  "apt-get install -y redis-server",
);
const dir = tempDir("redis-faults");

let redis: DurableRedis;
let upstream: Upstream;
beforeAll(async () => {
  if (skip) return;
  redis = await startDurableRedis(join(dir, "data"));
  upstream = await startUpstream({ delayMs: 2 });
});
afterAll(async () => {
  await redis?.stop();
  await upstream?.close();
});

interface Answer {
  name: string;
  answer: string;
}

function caller(recorder: Recorder) {
  return (name: string) =>
    recorder.call<Answer>({ role: "worker", model: "m", prompt: `do ${name}` }, async () => {
      const res = await fetch(`${upstream.url}/${name}`, { method: "POST" });
      return (await res.json()) as Answer;
    });
}

function watch(recorder: Recorder): Array<{ message: string; error: ErrorInfo | undefined }> {
  const warnings: Array<{ message: string; error: ErrorInfo | undefined }> = [];
  recorder.on("warning", (w) =>
    warnings.push({
      message: w.message,
      error: w.error === undefined ? undefined : errorInfo(w.error),
    }),
  );
  return warnings;
}

describe.skipIf(skip)("Redis killed mid-run", () => {
  it("auto: keeps answering from upstream with warning events while Redis is down, and hits again when it is back on the same port", async () => {
    const recorder = createRecorder({
      store: redis.url,
      mode: "auto",
      namespace: "auto",
      identity: IDENTITY,
    });
    const warnings = watch(recorder);
    const call = caller(recorder);
    try {
      // Recorded while Redis is up.
      for (let i = 0; i < 20; i++) expect((await call(`rec-${i}`)).answer).toBe(`rec-${i}#1`);
      expect(warnings).toStrictEqual([]);

      // 8 lanes of calls (recorded and new identities); Redis is killed with calls in flight.
      type Outcome =
        | { name: string; ok: true; value: Answer }
        | { name: string; ok: false; error: ErrorInfo };
      const outcomes: Outcome[] = [];
      let running = true;
      let serial = 0;
      const lane = async () => {
        while (running) {
          const n = serial++;
          const name = n % 2 === 0 ? `rec-${n % 20}` : `new-${n}`;
          outcomes.push(
            await call(name).then(
              (value) => ({ name, ok: true as const, value }),
              (error: unknown) => ({ name, ok: false as const, error: errorInfo(error) }),
            ),
          );
        }
      };
      const lanes = Array.from({ length: 8 }, lane);
      await until(() => outcomes.length >= 40);
      await redis.kill();
      const killedAt = outcomes.length;
      await until(() => outcomes.length >= killedAt + 200);
      const downWarnings = warnings.length;
      await redis.restart();
      // The lanes run on across the restart: each store operation reconnects on its own.
      const restartedAt = outcomes.length;
      await until(() => outcomes.length >= restartedAt + 100);
      running = false;
      await Promise.all(lanes);

      // No caller ever saw an error; every answer is for the identity asked.
      expect(outcomes.filter((o) => !o.ok)).toStrictEqual([]);
      for (const o of outcomes) if (o.ok) expect(o.value.name).toBe(o.name);
      // The outage was reported, as warnings carrying the StoreError.
      expect(downWarnings).toBeGreaterThan(0);
      for (const w of warnings) {
        expect(w.error?.name, w.message).toBe("StoreError");
        expect(w.error?.message).toContain(redis.url);
      }
      // Recorded identities asked during the outage went upstream (a bypass, not a miss).
      expect(recorder.stats.bypassed).toBeGreaterThan(0);
      console.log(
        `Redis outage: ${restartedAt - killedAt} calls answered while it was down, ${downWarnings} warnings, 0 errors`,
      );

      // Recovered: recordings made before the kill are hits again, with no upstream call and no warning.
      const upstreamBefore = upstream.total;
      const warningsBefore = warnings.length;
      for (let i = 0; i < 20; i++) expect((await call(`rec-${i}`)).answer).toBe(`rec-${i}#1`);
      expect(upstream.total).toBe(upstreamBefore);
      expect(warnings.length).toBe(warningsBefore);
      // ...and new identities are recorded and replayed again.
      const fresh = await call("after-restart");
      expect(await call("after-restart")).toStrictEqual(fresh);
      expect(upstream.calls.get("after-restart")).toBe(1);
      expect(warnings.length).toBe(warningsBefore);
    } finally {
      await recorder.close();
    }
  }, 60_000);

  it("replay: fails closed with a StoreError naming the store (never a ReplayMissError) while Redis is down, and replays again once it is back", async () => {
    const recording = createRecorder({
      store: redis.url,
      mode: "auto",
      namespace: "replay",
      identity: IDENTITY,
    });
    const recorded = await caller(recording)("kept");
    await recording.close();

    const replay = createRecorder({
      store: redis.url,
      mode: "replay",
      namespace: "replay",
      identity: IDENTITY,
    });
    const call = caller(replay);
    try {
      expect(await call("kept")).toStrictEqual(recorded);
      await redis.kill();
      const upstreamBefore = upstream.total;
      for (const name of ["kept", "never-recorded"]) {
        const started = Date.now();
        const error = await call(name).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, name).toBeInstanceOf(StoreError);
        expect(error, name).not.toBeInstanceOf(ReplayMissError);
        const e = error as StoreError;
        expect(e.store).toBe(redis.url);
        expect(e.operation).toBe("get");
        expect(e.message).toMatch(/^invocache store redis:\/\/127\.0\.0\.1:\d+: get ".*" failed: /);
        expect(e.message).toMatch(/ECONNREFUSED|closed/i);
        expect(e.message).toMatch(/never treated as a miss/);
        expect(Date.now() - started).toBeLessThan(3_000);
      }
      expect(upstream.total).toBe(upstreamBefore); // replay never goes upstream
      await redis.restart();
      expect(await call("kept")).toStrictEqual(recorded);
    } finally {
      await replay.close();
    }
  }, 60_000);
});
