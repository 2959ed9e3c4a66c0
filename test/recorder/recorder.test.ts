import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createRecorder,
  DivergenceError,
  EntryTooLargeError,
  InvalidOptionError,
  type InvocationRequest,
  invocationIdentity,
  type Mode,
  openStore,
  type Recorder,
  type RecorderEvents,
  ReplayMissError,
  type Store,
  StoreError,
  UnknownInvocationError,
} from "../../src/index.js";
import { resolveMode, runContentHash } from "../../src/recorder/index.js";
import { useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";
import { upstream } from "../helpers/upstream.js";

const dir = tempDir("recorder");

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const req: InvocationRequest = {
  role: "builder",
  model: "gpt-5",
  prompt: "Build the app",
  task: "T-1",
};

// Redis is a real redis-server started for this file (skipped visibly when
// not installed, a failure under CI).
const redis = useRedisServer();
const skipRedis = redis.skip;

const stores: [string, () => Store][] = [
  ["memory", () => openStore("memory://")],
  [
    "sqlite",
    () => openStore(`sqlite://${join(dir, `${Math.random().toString(36).slice(2)}.sqlite`)}`),
  ],
  ...(skipRedis
    ? []
    : ([["redis", () => isolated(openStore(redis.url()))]] as [string, () => Store][])),
];

/** A view of the shared Redis under a unique key prefix, so tests never see each other's entries. */
function isolated(store: Store): Store {
  const p = `t${Math.random().toString(36).slice(2)}-`;
  return {
    url: store.url,
    get: (k) => store.get(p + k),
    set: (k, v, o) => store.set(p + k, v, o),
    delete: (k) => store.delete(p + k),
    async *list(prefix) {
      for await (const [k, v] of store.list(p + prefix)) yield [k.slice(p.length), v];
    },
    acquireLease: (k, o, t) => store.acquireLease(p + k, o, t),
    releaseLease: (k, o) => store.releaseLease(p + k, o),
    close: () => store.close(),
  };
}

describe.each(stores)("recorder over %s", (_name, makeStore) => {
  let store: Store;
  const recorders: Recorder[] = [];
  const make = (mode: Mode, extra: Parameters<typeof createRecorder>[0] = {}) => {
    const r = createRecorder({ store, mode, identity: machine, ...extra });
    recorders.push(r);
    return r;
  };
  const fresh = () => {
    store = makeStore();
  };
  afterEach(async () => {
    for (const r of recorders.splice(0)) await r.close();
    await store?.close();
  });

  it("auto: records a miss, replays the hit without calling upstream", async () => {
    fresh();
    const u = upstream();
    const r = make("auto");
    expect(await r.call(req, u.fn)).toEqual({ text: "answer 1", finish_reason: "stop" });
    expect(await r.call(req, u.fn)).toEqual({ text: "answer 1", finish_reason: "stop" });
    expect(u.calls).toBe(1);
    expect(r.stats).toMatchObject({ hits: 1, misses: 1, recorded: 1 });
    expect(r.last).toMatchObject({
      id: invocationIdentity(req, machine),
      hit: true,
      occurrence: 0,
    });
  });

  it("once: an empty store records every call of the recorder; once recorded, only replays", async () => {
    fresh();
    const u = upstream();
    const first = make("once");
    const other = { ...req, prompt: "Test the app" };
    // Empty: the decision is auto for the recorder's whole life, not only its first call.
    await first.call(req, u.fn);
    await first.call(other, u.fn);
    expect(u.calls).toBe(2);
    expect(first.stats).toMatchObject({ recorded: 2, misses: 2 });
    expect(first.mode).toBe("once");

    const second = make("once");
    expect(await second.call(req, u.fn)).toEqual({ text: "answer 1", finish_reason: "stop" });
    const err = await second
      .call({ ...req, prompt: "Ship the app" }, u.fn)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplayMissError);
    expect((err as ReplayMissError).mode).toBe("replay");
    expect(u.calls).toBe(2);
  });

  it("RELOOP layer 1: attempt 1 and 2 after attempt 0 was cached go upstream", async () => {
    fresh();
    const u = upstream();
    const r = make("auto");
    await r.call(req, u.fn, { attempt: 0 });
    expect(await r.call(req, u.fn, { attempt: 1 })).toMatchObject({ text: "answer 2" });
    expect(await r.call(req, u.fn, { attempt: 2 })).toMatchObject({ text: "answer 3" });
    expect(u.calls).toBe(3);
  });

  it("RELOOP layer 2: inside a run a repeat is a new occurrence, replayed in order", async () => {
    fresh();
    const u = upstream();
    const rec = make("auto");
    const recorded = await rec.run(
      async () => [await rec.call(req, u.fn), await rec.call(req, u.fn)],
      {
        runId: "loop-1",
      },
    );
    expect(recorded.map((x) => x.text)).toEqual(["answer 1", "answer 2"]);

    const replay = make("replay");
    const replayed = await replay.run(
      async () => [await replay.call(req, u.fn), await replay.call(req, u.fn)],
      {
        runId: "loop-1",
      },
    );
    expect(replayed).toEqual(recorded);
    expect(u.calls).toBe(2);

    // A third repeat was never recorded: a miss that says so, never a replay of occurrence 0.
    const err = await replay
      .run(async () => {
        await replay.call(req, u.fn);
        await replay.call(req, u.fn);
        await replay.call(req, u.fn);
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplayMissError);
    expect((err as ReplayMissError).occurrence).toBe(2);
    expect((err as ReplayMissError).recordedOccurrences).toEqual([0, 1]);
    expect((err as Error).message).toMatch(/already consumed/);
    expect(u.calls).toBe(2);
  });

  it("RELOOP end to end: a rejected attempt 0 leads to a fresh attempt 1; replay reproduces trajectory and verdicts", async () => {
    fresh();
    const u = upstream();
    const pipeline = async (r: Recorder) =>
      r.run(
        async (run) => {
          const trail: string[] = [];
          for (let attempt = 0; attempt < 3; attempt++) {
            const out = await r.call(req, u.fn, { attempt });
            const ok = out.text !== "answer 1"; // the gate rejects the first output
            await r.verdict(r.last!.id, ok ? "accepted" : "rejected", {
              reason: ok ? "lgtm" : "tests fail",
            });
            trail.push(`${attempt}:${out.text}:${ok ? "accepted" : "rejected"}`);
            if (ok) break;
          }
          return { trail, hash: run.contentHash() };
        },
        { runId: "reloop" },
      );
    const first = await pipeline(make("auto"));
    expect(first.trail).toEqual(["0:answer 1:rejected", "1:answer 2:accepted"]);
    expect(u.calls).toBe(2);

    const replayer = make("replay");
    const divergences: RecorderEvents["divergence"][] = [];
    replayer.on("divergence", (d) => divergences.push(d));
    const second = await pipeline(replayer);
    expect(second).toEqual(first);
    expect(u.calls).toBe(2);
    expect(divergences).toEqual([]);

    // The retry links to the attempt it retries.
    const id1 = invocationIdentity(req, { ...machine, attempt: 1 });
    const entry = (await store.get(`default:e:${id1}:0`)) as {
      meta: { parent: string; verdict: { verdict: string } };
    };
    expect(entry.meta.parent).toBe(invocationIdentity(req, { ...machine, attempt: 0 }));
    expect(entry.meta.verdict.verdict).toBe("accepted");
  });

  it("RELOOP layer 3: a different verdict on replay is a divergence (error in replay, event in auto)", async () => {
    fresh();
    const u = upstream();
    const rec = make("auto");
    await rec.call(req, u.fn);
    await rec.verdict(rec.last!.id, "rejected");

    const auto = make("auto");
    const seen: RecorderEvents["divergence"][] = [];
    auto.on("divergence", (d) => seen.push(d));
    await auto.call(req, u.fn);
    await auto.verdict(auto.last!.id, "accepted");
    expect(seen).toMatchObject([{ kind: "verdict", expected: "rejected", actual: "accepted" }]);

    const replay = make("replay");
    await replay.call(req, u.fn);
    await expect(replay.verdict(replay.last!.id, "accepted")).rejects.toBeInstanceOf(
      DivergenceError,
    );
    // The recorded verdict was not overwritten by either.
    const id = invocationIdentity(req, machine);
    expect(
      ((await store.get(`default:e:${id}:0`)) as { meta: { verdict: { verdict: string } } }).meta
        .verdict.verdict,
    ).toBe("rejected");
  });

  it("a failed call inside a run gives its occurrence back (a retried 429 replays as occurrence 0)", async () => {
    fresh();
    const u = upstream();
    const rec = make("auto");
    let first = true;
    const flaky = async () => {
      if (first) {
        first = false;
        throw new Error("429 Too Many Requests");
      }
      return u.fn();
    };
    const hash = await rec.run(
      async (run) => {
        await expect(rec.call(req, flaky)).rejects.toThrow("429");
        await rec.call(req, flaky);
        expect(run.calls.map((c) => c.occurrence)).toEqual([0]);
        return run.contentHash();
      },
      { runId: "retry" },
    );
    const replay = make("replay");
    const served: number[] = [];
    const again = await replay.run(
      async (run) => {
        await replay.call(req, u.fn, { onServed: (s) => served.push(s.occurrence) });
        return run.contentHash();
      },
      { runId: "retry" },
    );
    expect(served).toEqual([0]);
    expect(again).toBe(hash);
    expect(u.calls).toBe(1);
  });

  it("verdict on an id that was never served is a typed error", async () => {
    fresh();
    const r = make("auto");
    await expect(r.verdict("0".repeat(64), "accepted")).rejects.toBeInstanceOf(
      UnknownInvocationError,
    );
  });

  it("run content hash: same trajectory, same hash; replay with a different trajectory diverges", async () => {
    fresh();
    const u = upstream();
    const other = { ...req, prompt: "Something else" };
    const rec = make("auto");
    const h1 = await rec.run(
      async (run) => {
        await rec.call(req, u.fn);
        await rec.call(other, u.fn);
        return run.contentHash();
      },
      { runId: "traj" },
    );
    expect(h1).toBe(
      runContentHash([invocationIdentity(req, machine), invocationIdentity(other, machine)]),
    );

    const replay = make("replay");
    const h2 = await replay.run(
      async (run) => {
        await replay.call(req, u.fn);
        await replay.call(other, u.fn);
        return run.contentHash();
      },
      { runId: "traj" },
    );
    expect(h2).toBe(h1);

    await expect(
      replay.run(
        async () => {
          await replay.call(other, u.fn);
          await replay.call(req, u.fn);
        },
        { runId: "traj" },
      ),
    ).rejects.toThrow(/different trajectory/);
  });

  it("replay: a miss throws ReplayMissError naming the nearest recording field by field", async () => {
    fresh();
    const u = upstream();
    await make("auto").call({ ...req, params: { temperature: 0.2 } }, u.fn);
    const replay = make("replay");
    const err = (await replay
      .call(
        { ...req, params: { temperature: 0.7 }, prompt: "Build the app at 2026-09-09T10:00:00Z" },
        u.fn,
        { attempt: 1 },
      )
      .catch((e: unknown) => e)) as ReplayMissError;
    expect(err).toBeInstanceOf(ReplayMissError);
    expect(err.shortId).toHaveLength(12);
    expect(err.mode).toBe("replay");
    expect(err.nearest[0]!.diffs.map((d) => d.field)).toEqual(["attempt", "params", "prompt"]);
    expect(err.message).toContain("params.temperature: 0.2 → 0.7");
    expect(err.message).toContain("attempt: 0 → 1");
    expect(err.message).toContain("timestamp ×1");
    expect(err.message).toContain("INVOCACHE_MODE=record");
    expect(u.calls).toBe(1);
  });

  it("record: always calls upstream and overwrites; passthrough neither reads nor writes", async () => {
    fresh();
    const u = upstream();
    await make("auto").call(req, u.fn);
    expect(await make("record").call(req, u.fn)).toMatchObject({ text: "answer 2" });
    expect(await make("auto").call(req, u.fn)).toMatchObject({ text: "answer 2" });
    const pass = make("passthrough");
    expect(await pass.call({ ...req, prompt: "new" }, u.fn)).toMatchObject({ text: "answer 3" });
    expect(
      await make("replay")
        .call({ ...req, prompt: "new" }, u.fn)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(ReplayMissError);
    expect(pass.stats.bypassed).toBe(1);
  });

  it("verify: calls live, compares with the recording, writes nothing", async () => {
    fresh();
    const u = upstream();
    await make("auto").call(req, u.fn);
    const v = make("verify");
    const seen: RecorderEvents["divergence"][] = [];
    v.on("divergence", (d) => seen.push(d));
    expect(await v.call(req, u.fn)).toMatchObject({ text: "answer 2" });
    expect(seen).toMatchObject([
      { kind: "response", expected: { text: "answer 1" }, actual: { text: "answer 2" } },
    ]);
    expect(await make("replay").call(req, u.fn)).toMatchObject({ text: "answer 1" });
  });

  it("never stores failures: thrown, aborted, or incomplete", async () => {
    fresh();
    const r = make("auto", {
      isComplete: (x) => (x as { finish_reason?: string }).finish_reason !== "length",
    });
    await expect(r.call(req, async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    const ac = new AbortController();
    await expect(
      r.call(
        req,
        async () => {
          ac.abort(new Error("cancelled"));
          return { text: "late" };
        },
        { signal: ac.signal },
      ),
    ).rejects.toThrow("cancelled");
    expect(
      await r.call(req, async () => ({ text: "trunc", finish_reason: "length" })),
    ).toMatchObject({ text: "trunc" });
    const u = upstream();
    expect(await r.call(req, u.fn)).toMatchObject({ text: "answer 1" });
    expect(await r.call(req, u.fn)).toMatchObject({ text: "answer 1" });
    expect(u.calls).toBe(1);
  });

  it("single-flight: 100 concurrent identical calls make 1 upstream call, each caller gets its own copy", async () => {
    fresh();
    const r = make("auto");
    let calls = 0;
    const slow = async () => {
      calls++;
      await new Promise((res) => setTimeout(res, 30));
      return { items: [1, 2, 3] };
    };
    const results = await Promise.all(Array.from({ length: 100 }, () => r.call(req, slow)));
    expect(calls).toBe(1);
    results[0]!.items.push(4);
    expect(results[1]!.items).toEqual([1, 2, 3]);
    expect(await r.call(req, slow)).toEqual({ items: [1, 2, 3] });
  });

  it("clones values: mutating a hit cannot corrupt later hits", async () => {
    fresh();
    const r = make("auto");
    const first = await r.call(req, async () => ({ list: ["a"] }));
    first.list.push("mutated");
    const hit = await r.call(req, async () => ({ list: ["never"] }));
    hit.list.push("again");
    expect(await r.call(req, async () => ({ list: ["never"] }))).toEqual({ list: ["a"] });
  });

  it("refuses an entry over maxEntryBytes: error in record mode, warning and no write in auto", async () => {
    fresh();
    const big = async () => ({ text: "x".repeat(5000) });
    const rec = make("record", { maxEntryBytes: 1000 });
    await expect(rec.call(req, big)).rejects.toBeInstanceOf(EntryTooLargeError);
    const auto = make("auto", { maxEntryBytes: 1000 });
    const warnings: string[] = [];
    auto.on("warning", (w) => warnings.push(w.message));
    expect((await auto.call(req, big)).text).toHaveLength(5000);
    expect(warnings.join()).toMatch(/over the 1000-byte entry limit/);
    expect(
      await make("replay")
        .call(req, big)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(ReplayMissError);
  });

  it("the size error names the part that is large: the prompt, or the response", async () => {
    fresh();
    const rec = make("record", { maxEntryBytes: 2000 });
    const bigPrompt = { ...req, prompt: "p".repeat(5000) };
    const err = (await rec
      .call(bigPrompt, async () => ({ text: "ok" }))
      .catch((e: unknown) => e)) as EntryTooLargeError;
    expect(err).toBeInstanceOf(EntryTooLargeError);
    expect(err.part).toBe("request");
    expect(err.message).toMatch(/the request of [0-9a-f]{12} is what is large: its manifest/);
    expect(err.message).not.toMatch(/the response of/);
    const big = (await rec
      .call(req, async () => ({ text: "x".repeat(5000) }))
      .catch((e: unknown) => e)) as EntryTooLargeError;
    expect(big.part).toBe("response");
    expect(big.message).toMatch(/the response of [0-9a-f]{12} is \d+ bytes/);
    expect(big.responseBytes).toBeGreaterThan(5000);
  });

  it("rejects a response that is not JSON with a TypeError, and stores nothing", async () => {
    fresh();
    const r = make("auto");
    await expect(r.call(req, async () => ({ at: new Date() }))).rejects.toThrow(
      /response\.at is a Date/,
    );
  });

  it("wrap memoizes any async function and keeps its signature", async () => {
    fresh();
    const r = make("auto");
    let calls = 0;
    const add = r.wrap(async function add(a: number, b: number) {
      calls++;
      return a + b;
    });
    expect(await add(1, 2)).toBe(3);
    expect(await add(1, 2)).toBe(3);
    expect(await add(2, 2)).toBe(4);
    expect(calls).toBe(2);
    const plan = r.wrap(
      async (goal: string) => ({ plan: `do ${goal}` }),
      (goal) => [{ role: "planner", prompt: goal }, { attempt: 0 }],
    );
    expect(await plan("x")).toEqual({ plan: "do x" });
  });
});

describe("store outages", () => {
  it("auto fails open with a warning; replay fails closed with StoreError", async () => {
    const dead = openStore("redis://127.0.0.1:1");
    const auto = createRecorder({ store: dead, mode: "auto", identity: machine });
    const warnings: string[] = [];
    auto.on("warning", (w) => warnings.push(w.message));
    const u = upstream();
    expect(await auto.call(req, u.fn)).toMatchObject({ text: "answer 1" });
    expect(auto.stats.bypassed).toBe(1);
    expect(warnings[0]).toMatch(/failed on read/);
    const replay = createRecorder({ store: dead, mode: "replay", identity: machine });
    await expect(replay.call(req, u.fn)).rejects.toBeInstanceOf(StoreError);
    await dead.close();
  });
});

describe("mode selection", () => {
  it("option, else INVOCACHE_MODE, else replay under CI, else auto", () => {
    expect(resolveMode("record", { INVOCACHE_MODE: "replay" })).toBe("record");
    expect(resolveMode(undefined, { INVOCACHE_MODE: "passthrough", CI: "1" })).toBe("passthrough");
    expect(resolveMode(undefined, { CI: "true" })).toBe("replay");
    expect(resolveMode(undefined, { CI: "false" })).toBe("auto");
    expect(resolveMode(undefined, {})).toBe("auto");
    expect(() => resolveMode(undefined, { INVOCACHE_MODE: "fast" })).toThrow(
      /INVOCACHE_MODE must be one of/,
    );
    expect(() => resolveMode("nope" as Mode)).toThrow(InvalidOptionError);
    expect(resolveMode(undefined, { INVOCACHE_MODE: "once" })).toBe("once");
  });
  it("an unknown mode names ours for the VCR, vcrpy and Polly names", () => {
    const err = (() => {
      try {
        resolveMode(undefined, { INVOCACHE_MODE: "new_episodes" });
      } catch (e) {
        return e;
      }
    })() as InvalidOptionError;
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.field).toBe("INVOCACHE_MODE");
    expect(err.message).toMatch(/must be one of replay, auto, record, passthrough, verify, once/);
    expect(err.message).toMatch(/"new_episodes".*is "auto"/);
    expect(() => resolveMode("all" as Mode)).toThrow(/VCR's "all".* is "record"/);
    expect(() => resolveMode("none" as Mode)).toThrow(/VCR's "none".* is "replay"/);
    expect(() => resolveMode("fast" as Mode)).toThrow(
      /once → "once", new_episodes → "auto", none → "replay", all → "record"/,
    );
  });
  it("bad recorder options are TypeErrors naming the option", () => {
    expect(() => createRecorder({ store: "memory://", namespace: "a:b" })).toThrow(/namespace/);
    expect(() => createRecorder({ store: "memory://", maxEntryBytes: -1 })).toThrow(
      /maxEntryBytes/,
    );
    expect(() => createRecorder({ store: "ftp://x" })).toThrow(/url/);
  });
});
