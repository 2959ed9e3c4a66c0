/**
 * Run scopes under nesting and lost async context (RELOOP layer 2): a retry
 * made inside a helper that opens its own run, or from a job queue created
 * before the run, must never be served the output the gate rejected.
 */
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import {
  createRecorder,
  type InvocationRequest,
  type Mode,
  openStore,
  type Recorder,
  type RecorderEvents,
  type RunInfo,
  type Store,
} from "../../src/index.js";
import { withCassette } from "../../src/testing/vitest.js";
import { MACHINE, tempDir } from "../cassette/helpers.js";

const req: InvocationRequest = { role: "builder", model: "gpt-5", prompt: "Build the app" };

/** An upstream that answers differently every time: "draft 1", "draft 2"… */
function upstream() {
  const u = { calls: 0, fn: async () => ({ text: `draft ${++u.calls}` }) };
  return u;
}

/** The gate rejects the first draft only. */
const gate = (out: { text: string }) => out.text !== "draft 1";

/**
 * A pipeline whose retry lives in a helper that opens its own run: the
 * caller forgot to bump `attempt`, so only the run's occurrences keep the
 * retry from being served the rejected draft.
 */
async function pipeline(r: Recorder, fn: () => Promise<{ text: string }>) {
  return r.run(async () => {
    const draft = await r.call(req, fn);
    await r.verdict(r.last!.id, gate(draft) ? "accepted" : "rejected");
    const retry = await retryStep(r, fn);
    await r.verdict(r.last!.id, gate(retry) ? "accepted" : "rejected");
    return [draft.text, retry.text];
  });
}

async function retryStep(r: Recorder, fn: () => Promise<{ text: string }>) {
  return r.run(async () => r.call(req, fn));
}

/**
 * A job queue whose worker loop was started before any run: the jobs run in
 * the loop's async context, where no run is in effect (AsyncLocalStorage
 * propagates along where a callback was created, not where it was queued).
 */
function startQueue() {
  const jobs: (() => void)[] = [];
  const timer = setInterval(() => jobs.shift()?.(), 1);
  return {
    push<T>(job: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) =>
        jobs.push(() => void Promise.resolve().then(job).then(resolve, reject)),
      );
    },
    stop: () => clearInterval(timer),
  };
}

describe("nested runs", () => {
  let store: Store;
  const recorders: Recorder[] = [];
  const make = (mode: Mode) => {
    const r = createRecorder({ store, mode, identity: MACHINE });
    recorders.push(r);
    return r;
  };
  afterEach(async () => {
    for (const r of recorders.splice(0)) await r.close();
    await store.close();
  });

  it("a retry inside a helper's own run is a new occurrence, never the rejected draft; replay reproduces it", async () => {
    store = openStore("memory://");
    const u = upstream();
    expect(await pipeline(make("auto"), u.fn)).toEqual(["draft 1", "draft 2"]);
    expect(u.calls).toBe(2);
    const replay = make("replay");
    const divergences: RecorderEvents["divergence"][] = [];
    replay.on("divergence", (d) => divergences.push(d));
    expect(await pipeline(replay, u.fn)).toEqual(["draft 1", "draft 2"]);
    expect(u.calls).toBe(2);
    expect(divergences).toEqual([]);
  });

  it("a nested run counts occurrences with its enclosing run, keeps its own id and sub-trajectory, and adds to the parent's", async () => {
    store = openStore("memory://");
    const u = upstream();
    const r = make("auto");
    await r.run(
      async (outer) => {
        await r.call(req, u.fn);
        const inner = await r.run(
          async (inner) => {
            expect(r.currentRun()).toBe(inner);
            await r.call(req, u.fn);
            await r.call({ ...req, prompt: "Review it" }, u.fn);
            return inner;
          },
          { runId: "inner" },
        );
        expect(r.currentRun()).toBe(outer);
        expect(inner.runId).toBe("inner");
        expect(inner.parent).toBe(outer);
        expect(outer.parent).toBeUndefined();
        expect(inner.calls[0]!.id).toBe(outer.calls[0]!.id);
        expect(inner.calls.map((c) => c.occurrence)).toEqual([1, 0]);
        expect(outer.calls.map((c) => c.occurrence)).toEqual([0, 1, 0]);
        expect(outer.calls.slice(1)).toEqual(inner.calls);
        expect(inner.contentHash()).not.toBe(outer.contentHash());
      },
      { runId: "outer" },
    );
    expect(u.calls).toBe(3);
  });
});

describe("a run handle for calls that lost the async context", () => {
  let store: Store;
  const recorders: Recorder[] = [];
  const make = (mode: Mode) => {
    const r = createRecorder({ store, mode, identity: MACHINE });
    recorders.push(r);
    return r;
  };
  afterEach(async () => {
    for (const r of recorders.splice(0)) await r.close();
    await store.close();
  });

  it("a retry from a queue started before the run is detected (a warning event and a process warning)", async () => {
    store = openStore("memory://");
    const queue = startQueue();
    const u = upstream();
    const r = make("auto");
    const warnings: RecorderEvents["warning"][] = [];
    r.on("warning", (w) => warnings.push(w));
    const processWarnings: Error[] = [];
    const onWarning = (w: Error) => processWarnings.push(w);
    process.on("warning", onWarning);
    try {
      await r.run(async () => {
        await r.call(req, u.fn);
        await queue.push(() => r.call(req, u.fn));
      });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      queue.stop();
      process.off("warning", onWarning);
    }
    expect(warnings.map((w) => w.message).join("\n")).toMatch(/outside any run.*\{ run \}/s);
    expect(
      processWarnings.filter(
        (w) => (w as Error & { code?: string }).code === "INVOCACHE_RUN_SCOPE_LOST",
      ),
    ).toHaveLength(1);
  });

  it("call(req, fn, { run }) and recorder.withRun(run, fn) put a queued call back in its run", async () => {
    store = openStore("memory://");
    const queue = startQueue();
    const u = upstream();
    const flow = async (r: Recorder) =>
      r.run(
        async (run) => {
          const draft = await r.call(req, u.fn);
          await r.verdict(r.last!.id, gate(draft) ? "accepted" : "rejected");
          const viaOption = await queue.push(() => r.call(req, u.fn, { run }));
          const viaScope = await queue.push(() =>
            r.withRun(run, async () => {
              expect(r.currentRun()).toBe(run);
              return r.call(req, u.fn);
            }),
          );
          return [draft.text, viaOption.text, viaScope.text, run.calls.length];
        },
        { runId: "queued" },
      );
    try {
      expect(await flow(make("auto"))).toEqual(["draft 1", "draft 2", "draft 3", 3]);
      expect(await flow(make("replay"))).toEqual(["draft 1", "draft 2", "draft 3", 3]);
    } finally {
      queue.stop();
    }
    expect(u.calls).toBe(3);
  });

  it("a run that ended, or belongs to another recorder, is refused with a TypeError naming the option", async () => {
    store = openStore("memory://");
    const u = upstream();
    const r = make("auto");
    let ended: RunInfo | undefined;
    await r.run(async (run) => {
      ended = run;
    });
    await expect(r.call(req, u.fn, { run: ended })).rejects.toThrow(/run.*has ended/);
    await expect(r.withRun(ended!, async () => 1)).rejects.toBeInstanceOf(TypeError);
    const other = make("auto");
    await other.run(async (run) => {
      await expect(r.call(req, u.fn, { run })).rejects.toThrow(/another recorder/);
    });
    expect(u.calls).toBe(0);
  });
});

describe("through withCassette (the test body is a run)", () => {
  const root = tempDir("nested-runs");
  const opts = (mode: Mode) => ({
    root,
    mode,
    parseCache: false as const,
    recorder: { identity: MACHINE },
  });

  it("a pipeline that opens its own runs records and replays the reloop story", async (ctx: TestContext) => {
    const u = upstream();
    const seen: string[][] = [];
    for (const mode of ["auto", "replay"] as const) {
      await withCassette(opts(mode), async ({ recorder }) => {
        seen.push(await pipeline(recorder, u.fn));
        // A retry in a helper run right in the test body: still a new occurrence.
        seen.push([(await retryStep(recorder, u.fn)).text]);
      })(ctx);
    }
    expect(seen).toEqual([
      ["draft 1", "draft 2"],
      ["draft 3"],
      ["draft 1", "draft 2"],
      ["draft 3"],
    ]);
    expect(u.calls).toBe(3);
  });
});

describe("occurrences given back under concurrency", () => {
  it("three identical concurrent calls that fail leave their retries at 0, 1, 2, which a replay of the run asks for", async () => {
    const store = openStore("memory://");
    const runOnce = async (r: Recorder, failFirst: boolean) => {
      const occurrences: number[] = [];
      const answers = await r.run(
        async () => {
          const u = upstream();
          const once = (i: number) =>
            r.call(req, async () => (failFirst ? Promise.reject(new Error(`429 #${i}`)) : u.fn()), {
              onServed: (s) => occurrences.push(s.occurrence),
            });
          if (failFirst) {
            // All three start before any fails: each holds its own occurrence, then gives it back.
            const failed = await Promise.allSettled([0, 1, 2].map(once));
            expect(failed.every((f) => f.status === "rejected")).toBe(true);
          }
          return Promise.all(
            [0, 1, 2].map((i) =>
              r
                .call(req, u.fn, { onServed: (s) => occurrences.push(s.occurrence) })
                .then((a) => `${i}:${a.text}`),
            ),
          );
        },
        { runId: "given-back" },
      );
      return { answers, occurrences };
    };
    const recorded = await runOnce(createRecorder({ store, mode: "auto" }), true);
    expect([...recorded.occurrences].sort()).toStrictEqual([0, 1, 2]);
    const replayed = await runOnce(createRecorder({ store, mode: "replay" }), false);
    expect([...replayed.occurrences].sort()).toStrictEqual([0, 1, 2]);
    await store.close();
  });

  it("a failure in the middle of three concurrent calls leaves a hole the next identical call takes", async () => {
    const r = createRecorder({ store: "memory://", mode: "auto" });
    const seen: number[] = [];
    await r.run(async () => {
      const u = upstream();
      let release!: () => void;
      const gateOpen = new Promise<void>((res) => {
        release = res;
      });
      const slow = async () => {
        await gateOpen;
        return u.fn();
      };
      const on = { onServed: (s: { occurrence: number }) => seen.push(s.occurrence) };
      const a = r.call(req, slow, on); // 0
      const b = r.call(req, () => Promise.reject(new Error("boom")), on); // 1, given back
      const c = r.call(req, slow, on); // 2
      await expect(b).rejects.toThrow("boom");
      const d = r.call(req, u.fn, on); // takes the hole: 1
      await d;
      release();
      await Promise.all([a, c]);
      const e = r.call(req, u.fn, on); // the next new one: 3
      await e;
    });
    expect(seen).toStrictEqual([1, 0, 2, 3]);
    await r.close();
  });
});
