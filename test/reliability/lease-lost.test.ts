/**
 * A recording whose lease lapses while its upstream call is in flight (the
 * store was down for longer than the lease, so the holder could not renew
 * it): another process then takes the expired lease and calls upstream for
 * the same entry. The holder cannot take its call back, but the duplicate
 * must never be silent: the holder says, with a `warning` event naming the
 * entry, that single-flight no longer holds for it.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { redisServerBinary } from "../helpers/redis-server.js";
import { skipUnless } from "../helpers/service.js";
import { type DurableRedis, sleep, startDurableRedis, tempDir } from "./helpers.js";

const IDENTITY = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const LEASE_MS = 300;
const skip = skipUnless(
  redisServerBinary !== undefined,
  "redis-server",
  "apt-get install -y redis-server",
);
const dir = tempDir("lease-lost");

let redis: DurableRedis;
beforeAll(async () => {
  if (!skip) redis = await startDurableRedis(join(dir, "data"));
});
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(skip)("a lease that lapses while its recording is in flight", () => {
  it("warns, naming the entry, that another process may call upstream for it too", async () => {
    const opts = { store: redis.url, mode: "auto" as const, leaseMs: LEASE_MS, identity: IDENTITY };
    const a = createRecorder(opts);
    const b = createRecorder(opts);
    const warnings: Array<{ message: string; id?: string }> = [];
    a.on("warning", (w) => warnings.push(w));
    const req = { role: "r", model: "m", prompt: "the held call" };
    let calls = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const inFlight = new Promise<void>((resolve) => {
      started = resolve;
    });
    const first = a.call(req, async () => {
      calls++;
      started();
      await held;
      return { text: "from a" };
    });
    await inFlight;
    // The store goes away for several lease lengths: a cannot renew, its lease expires.
    await redis.kill();
    await sleep(LEASE_MS * 4);
    await redis.restart();
    // Another process now finds the entry missing and its lease free.
    const second = await b.call(req, async () => {
      calls++;
      return { text: "from b" };
    });
    release();
    await first;
    expect(second).toStrictEqual({ text: "from b" });
    expect(calls).toBe(2);
    const lost = warnings.filter((w) => /lease/.test(w.message) && /upstream/.test(w.message));
    expect(lost, JSON.stringify(warnings)).toHaveLength(1);
    expect(lost[0]!.id).toBeDefined();
    await Promise.all([a.close(), b.close()]);
  }, 30_000);
});
