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
import { openStore, type Store } from "../../src/store/index.js";
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

describe("a lease that lapses between its taking and the holder's upstream call", () => {
  // The holder's read after taking the lease (did someone record meanwhile?)
  // answers "no" but only after the lease has expired: another process took
  // the expired lease, recorded and released it in between. The holder must
  // not then call upstream on the strength of a lease it no longer had.
  it("takes the lease again and serves the other process's recording: one upstream call", async () => {
    const url = `sqlite://${join(tempDir("lease-late"), "store.sqlite")}`;
    const shared = openStore(url);
    let slowNextRead = false;
    let readLate: () => void = () => {};
    const lateRead = new Promise<void>((resolve) => {
      readLate = resolve;
    });
    // A's store: the same file; its read after taking the lease returns its
    // (empty) answer only once the lease has expired several times over.
    const slowAcquire = async (key: string, owner: string, ttlMs: number) => {
      const got = await shared.acquireLease(key, owner, ttlMs);
      if (got) slowNextRead = true;
      return got;
    };
    const slowGet = async (key: string) => {
      const value = await shared.get(key);
      if (slowNextRead) {
        slowNextRead = false;
        readLate();
        await sleep(LEASE_MS * 4);
      }
      return value;
    };
    const slow = new Proxy(shared, {
      get(target, name) {
        if (name === "acquireLease") return slowAcquire;
        if (name === "get") return slowGet;
        const value = Reflect.get(target, name) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    const a = createRecorder({ store: slow, mode: "auto", leaseMs: LEASE_MS, identity: IDENTITY });
    const b = createRecorder({ store: url, mode: "auto", leaseMs: LEASE_MS, identity: IDENTITY });
    const warnings: Array<{ message: string }> = [];
    a.on("warning", (w) => warnings.push(w));
    b.on("warning", (w) => warnings.push(w));
    const req = { role: "r", model: "m", prompt: "the late read" };
    const upstream: string[] = [];
    const first = a.call(req, async () => {
      upstream.push("a");
      return { text: "from a" };
    });
    await lateRead;
    await sleep(LEASE_MS * 2);
    // The lease has expired: b takes it, calls upstream, records, releases.
    const second = await b.call(req, async () => {
      upstream.push("b");
      return { text: "from b" };
    });
    expect(second).toStrictEqual({ text: "from b" });
    const got = await first;
    // Single-flight held: one upstream call, the recording served, nothing to warn about.
    expect({ upstream, warnings: warnings.map((w) => w.message) }).toStrictEqual({
      upstream: ["b"],
      warnings: [],
    });
    expect(got).toStrictEqual({ text: "from b" });
    await Promise.all([a.close(), b.close()]);
    await shared.close();
  }, 30_000);
});

describe("a lease whose re-check read fails", () => {
  // The holder's read after taking the lease (did someone record meanwhile?)
  // fails, as a read does while the store restarts: another process may well
  // have recorded the entry and released its lease in between. Not knowing
  // is not "no": the holder must not call upstream on it (a silent second
  // call, whose recording would replace the first one's), but read again.
  it("reads again and serves the other process's recording: one upstream call", async () => {
    const url = `sqlite://${join(tempDir("lease-recheck"), "store.sqlite")}`;
    const shared = openStore(url);
    const b = createRecorder({ store: url, mode: "auto", leaseMs: LEASE_MS, identity: IDENTITY });
    const req = { role: "r", model: "m", prompt: "the failed re-check" };
    const upstream: string[] = [];
    let failNextRead = false;
    let recordedByB = false;
    // A's store: the same file. Just before A takes the lease, B records the
    // entry (and releases its own lease); A's read after taking it then fails once.
    const flaky = failingReads(shared, {
      beforeTaking: async () => {
        if (recordedByB) return;
        recordedByB = true;
        await b.call(req, async () => {
          upstream.push("b");
          return { text: "from b" };
        });
      },
      taken: () => {
        failNextRead = true;
      },
      fails: () => {
        const fail = failNextRead;
        failNextRead = false;
        return fail;
      },
    });
    const a = createRecorder({ store: flaky, mode: "auto", leaseMs: LEASE_MS, identity: IDENTITY });
    const got = await a.call(req, async () => {
      upstream.push("a");
      return { text: "from a" };
    });
    expect({ upstream, got }).toStrictEqual({ upstream: ["b"], got: { text: "from b" } });
    await Promise.all([a.close(), b.close()]);
    await shared.close();
  }, 30_000);
});

describe("a call aborted while its lease is held and its re-check keeps failing", () => {
  // The holder's read after taking the lease fails on every try (the store
  // answers leases but not reads), so it waits to read again, holding the
  // lease; then its caller aborts. The lease must go with the call: another
  // process must not wait for it to expire (30 s by default) to record.
  it("releases the lease: another process records at once", async () => {
    const url = `sqlite://${join(tempDir("lease-abort"), "store.sqlite")}`;
    const shared = openStore(url);
    const LONG_LEASE = 20_000;
    let leased = false;
    let firstFailedRead: () => void = () => {};
    const failedRead = new Promise<void>((resolve) => {
      firstFailedRead = resolve;
    });
    const flaky = failingReads(shared, {
      taken: () => {
        leased = true;
      },
      fails: () => {
        if (leased) firstFailedRead();
        return leased;
      },
    });
    const opts = { mode: "auto" as const, leaseMs: LONG_LEASE, identity: IDENTITY };
    const a = createRecorder({ ...opts, store: flaky });
    const b = createRecorder({ ...opts, store: url });
    const req = { role: "r", model: "m", prompt: "the aborted holder" };
    const upstream: string[] = [];
    const controller = new AbortController();
    const first = a.call(
      req,
      async () => {
        upstream.push("a");
        return { text: "from a" };
      },
      { signal: controller.signal },
    );
    const outcome = first.then(
      () => "answered",
      () => "aborted",
    );
    await failedRead;
    controller.abort();
    expect(await outcome).toBe("aborted");
    const started = Date.now();
    const second = await b.call(req, async () => {
      upstream.push("b");
      return { text: "from b" };
    });
    expect({ second, upstream }).toStrictEqual({ second: { text: "from b" }, upstream: ["b"] });
    expect(Date.now() - started).toBeLessThan(LONG_LEASE / 4);
    await Promise.all([a.close(), b.close()]);
    await shared.close();
  }, 60_000);
});

/**
 * `shared` as one process sees it: `beforeTaking` runs before each lease
 * taking and `taken` after one that succeeded; a read (`get`, `getHit`)
 * throws, as a read does while the store restarts, whenever `fails()` says so.
 */
function failingReads(
  shared: Store,
  hooks: { beforeTaking?: () => Promise<void>; taken: () => void; fails: () => boolean },
): Store {
  const acquire = async (key: string, owner: string, ttlMs: number) => {
    await hooks.beforeTaking?.();
    const got = await shared.acquireLease(key, owner, ttlMs);
    if (got) hooks.taken();
    return got;
  };
  const read =
    (name: "get" | "getHit") =>
    async (...args: unknown[]) => {
      if (hooks.fails()) throw new Error("Connection terminated unexpectedly");
      return (shared[name] as (...a: unknown[]) => Promise<unknown>).apply(shared, args);
    };
  return new Proxy(shared, {
    get(target, name) {
      if (name === "acquireLease") return acquire;
      if (name === "get" || name === "getHit") return read(name);
      const value = Reflect.get(target, name) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
}
