/**
 * In-process single-flight under signals and per-call policy: each caller's
 * AbortSignal and isComplete apply to its own wait. A follower that aborts
 * rejects alone; a leader that aborts lets a follower take over; a follower
 * whose isComplete refuses the shared answer calls upstream itself; a
 * follower that did not go upstream is a hit, with the time it saved.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createRecorder,
  type InvocationRequest,
  openStore,
  type Recorder,
  type RecorderEvents,
  type Store,
} from "../../src/index.js";
import type { ServedInfo } from "../../src/recorder/index.js";
import { MACHINE } from "../cassette/helpers.js";

const req: InvocationRequest = { role: "builder", model: "gpt-5", prompt: "Build the app" };

/** An upstream whose calls wait until released; each answers with its number. */
function gatedUpstream() {
  const gates: (() => void)[] = [];
  const u = {
    calls: 0,
    /** Ignores any signal, like an SDK call that does not take one. */
    fn: async () => {
      const n = ++u.calls;
      await new Promise<void>((resolve) => gates.push(resolve));
      return { text: `answer ${n}`, finish_reason: n === 1 ? "length" : "stop" };
    },
    /** Let every waiting call answer. */
    release: () => {
      for (const g of gates.splice(0)) g();
    },
    /** Wait until `n` upstream calls have started. */
    started: async (n: number) => {
      while (u.calls < n) await new Promise((r) => setImmediate(r));
    },
  };
  return u;
}

/** Settle state of a promise, without waiting for it. */
function track<T>(p: Promise<T>) {
  const t: { state: "pending" | "fulfilled" | "rejected"; value?: T; error?: unknown } = {
    state: "pending",
  };
  p.then(
    (value) => Object.assign(t, { state: "fulfilled", value }),
    (error: unknown) => Object.assign(t, { state: "rejected", error }),
  );
  return t;
}

const tick = () => new Promise((r) => setImmediate(r));

describe("single-flight with signals and policies", () => {
  let store: Store;
  const recorders: Recorder[] = [];
  const make = () => {
    const r = createRecorder({ store, mode: "auto", identity: MACHINE });
    recorders.push(r);
    return r;
  };
  afterEach(async () => {
    for (const r of recorders.splice(0)) await r.close();
    await store.close();
  });

  it("a follower's own abort or timeout rejects it at once; the leader goes on and records", async () => {
    store = openStore("memory://");
    const u = gatedUpstream();
    const r = make();
    const leader = track(r.call(req, u.fn));
    await u.started(1);
    const controller = new AbortController();
    const aborted = track(r.call(req, u.fn, { signal: controller.signal }));
    const timedOut = r.call(req, u.fn, { signal: AbortSignal.timeout(20) });
    controller.abort(new Error("user cancelled"));
    await tick();
    expect(aborted.state).toBe("rejected");
    expect((aborted.error as Error).message).toBe("user cancelled");
    await expect(timedOut).rejects.toMatchObject({ name: "TimeoutError" });
    expect(leader.state).toBe("pending");
    u.release();
    await tick();
    expect(leader.state).toBe("fulfilled");
    expect(u.calls).toBe(1);
    expect(await r.call(req, u.fn)).toEqual({ text: "answer 1", finish_reason: "length" });
  });

  it("the leader's abort rejects only the leader: a follower that did not abort takes over and gets an answer", async () => {
    store = openStore("memory://");
    const u = gatedUpstream();
    const r = make();
    const controller = new AbortController();
    const leader = track(r.call(req, u.fn, { signal: controller.signal }));
    await u.started(1);
    const follower = r.call(req, u.fn);
    await tick();
    controller.abort(new Error("leader gave up"));
    await tick();
    expect(leader.state).toBe("rejected");
    expect((leader.error as Error).message).toBe("leader gave up");
    await u.started(2); // the follower went upstream itself
    u.release();
    expect(await follower).toEqual({ text: "answer 2", finish_reason: "stop" });
    // The aborted leader's late answer was never stored; the follower's was.
    await tick();
    expect(await r.call(req, u.fn)).toEqual({ text: "answer 2", finish_reason: "stop" });
  });

  it("a follower whose isComplete refuses the shared answer calls upstream itself", async () => {
    store = openStore("memory://");
    const u = gatedUpstream();
    const r = make();
    const leader = r.call(req, u.fn);
    await u.started(1);
    const strict = r.call(req, u.fn, {
      isComplete: (v) => (v as { finish_reason: string }).finish_reason === "stop",
    });
    const lenient = r.call(req, u.fn);
    await tick();
    u.release(); // answer 1 (finish_reason "length") is the leader's
    await u.started(2);
    u.release();
    expect(await leader).toMatchObject({ text: "answer 1" });
    expect(await lenient).toMatchObject({ text: "answer 1" });
    expect(await strict).toEqual({ text: "answer 2", finish_reason: "stop" });
    expect(u.calls).toBe(2);
  });

  it("a follower is a hit with the time it saved, in stats, events and onServed", async () => {
    store = openStore("memory://");
    const u = gatedUpstream();
    const r = make();
    const hits: RecorderEvents["hit"][] = [];
    const misses: RecorderEvents["miss"][] = [];
    r.on("hit", (e) => hits.push(e));
    r.on("miss", (e) => misses.push(e));
    const served: ServedInfo[] = [];
    const leader = r.call(req, u.fn, { onServed: (s) => served.push(s) });
    await u.started(1);
    await new Promise((resolve) => setTimeout(resolve, 5)); // the leader's call takes some time
    const followers = [1, 2, 3].map(() => r.call(req, u.fn, { onServed: (s) => served.push(s) }));
    await tick();
    u.release();
    await Promise.all([leader, ...followers]);
    expect(u.calls).toBe(1);
    expect(misses).toHaveLength(1);
    expect(hits).toHaveLength(3);
    expect(r.stats).toMatchObject({ hits: 3, misses: 1, recorded: 1 });
    expect(hits.every((h) => h.savedMs > 0)).toBe(true);
    expect(r.stats.savedMs).toBeCloseTo(
      hits.reduce((a, h) => a + h.savedMs, 0),
      6,
    );
    expect(served.map((s) => s.hit)).toEqual([false, true, true, true]);
  });
});
