import { afterEach, describe, expect, it } from "vitest";
import {
  createRecorder,
  EntryTooLargeError,
  type InvocationRequest,
  openStore,
  type Recorder,
  type RecorderEvents,
  ReplayMissError,
  type Store,
} from "../../src/index.js";

const req: InvocationRequest = {
  role: "writer",
  model: "m",
  prompt: "stream me",
  params: { stream: true },
};
const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

async function* upstreamEvents(parts: string[], gapMs = 0, failAt = -1) {
  for (let i = 0; i < parts.length; i++) {
    if (i === failAt) throw new Error("connection reset");
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    yield { delta: parts[i]! };
  }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("recorder.stream", () => {
  let store: Store;
  const recorders: Recorder[] = [];
  const make = (mode: "auto" | "replay" | "record", maxEntryBytes?: number) => {
    const r = createRecorder({
      store,
      mode,
      identity: machine,
      ...(maxEntryBytes === undefined ? {} : { maxEntryBytes }),
    });
    recorders.push(r);
    return r;
  };
  afterEach(async () => {
    for (const r of recorders.splice(0)) await r.close();
    await store.close();
  });

  it("streams live on a miss, then replays the same events in order with zero upstream calls", async () => {
    store = openStore("memory://");
    let calls = 0;
    const open = async () => {
      calls++;
      return { head: { status: 200 }, events: upstreamEvents(["Hel", "lo", ", ", "world"], 5) };
    };
    const auto = make("auto");
    const first = await auto.stream(req, open);
    expect(first.hit).toBe(false);
    expect(first.head).toEqual({ status: 200 });
    const live: string[] = [];
    for await (const e of first.events) live.push(e.delta);
    expect(live).toEqual(["Hel", "lo", ", ", "world"]);

    const replay = make("replay");
    const second = await replay.stream(req, open);
    expect(second.hit).toBe(true);
    expect((await collect(second.events)).map((e) => e.delta)).toEqual(live);
    expect(calls).toBe(1);
  });

  it("delivers the first event before the upstream stream has finished", async () => {
    store = openStore("memory://");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield { delta: "first" };
      await gate;
      yield { delta: "second" };
    }
    const r = make("auto");
    const { events } = await r.stream(req, async () => ({ head: {}, events: slow() }));
    const it = events[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual({ delta: "first" });
    release();
    expect((await it.next()).value).toEqual({ delta: "second" });
    expect((await it.next()).done).toBe(true);
  });

  it("replays with the recorded timing when asked", async () => {
    store = openStore("memory://");
    await collect(
      (
        await make("auto").stream(req, async () => ({
          head: {},
          events: upstreamEvents(["a", "b", "c"], 40),
        }))
      ).events,
    );
    const t0 = performance.now();
    await collect(
      (
        await make("replay").stream(req, async () => ({ head: {}, events: upstreamEvents([]) }), {
          timing: "recorded",
        })
      ).events,
    );
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
  });

  it("never stores a stream that failed midway or is incomplete; the reader sees the error", async () => {
    store = openStore("memory://");
    const r = make("auto");
    const broken = await r.stream(req, async () => ({
      head: {},
      events: upstreamEvents(["a", "b", "c"], 0, 2),
    }));
    await expect(collect(broken.events)).rejects.toThrow("connection reset");
    const truncated = await r.stream(
      req,
      async () => ({ head: {}, events: upstreamEvents(["a", "[length]"]) }),
      {
        isComplete: (v) => !JSON.stringify(v).includes("[length]"),
      },
    );
    expect(await collect(truncated.events)).toHaveLength(2);
    await expect(
      make("replay").stream(req, async () => ({ head: {}, events: upstreamEvents([]) })),
    ).rejects.toBeInstanceOf(ReplayMissError);
  });

  it("shares one upstream stream between concurrent identical calls", async () => {
    store = openStore("memory://");
    let calls = 0;
    const r = make("auto");
    const open = async () => {
      calls++;
      return { head: { n: calls }, events: upstreamEvents(["x", "y"], 10) };
    };
    const results = await Promise.all([
      r.stream(req, open),
      r.stream(req, open),
      r.stream(req, open),
    ]);
    const texts = await Promise.all(
      results.map(async (s) => (await collect(s.events)).map((e) => e.delta).join("")),
    );
    expect(texts).toEqual(["xy", "xy", "xy"]);
    expect(calls).toBe(1);
    // Per call: the leader read it live, the followers were served its recording.
    expect(results.map((s) => s.hit)).toEqual([false, true, true]);
  });

  it("a reader that stops closes the upstream: nothing more is pulled, the signal aborts, nothing is stored", async () => {
    store = openStore("memory://");
    const seen = { pulled: 0, closed: false, aborted: false };
    async function* endless() {
      try {
        for (let i = 0; i < 100_000; i++) {
          await new Promise((r) => setImmediate(r));
          seen.pulled++;
          yield { delta: `e${i}` };
        }
      } finally {
        seen.closed = true;
      }
    }
    const r = make("auto");
    const { events } = await r.stream(req, async ({ signal }) => {
      signal.addEventListener("abort", () => {
        seen.aborted = true;
      });
      return { head: {}, events: endless() };
    });
    const got: string[] = [];
    for await (const e of events) {
      got.push(e.delta);
      if (got.length === 3) break;
    }
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    const pulled = seen.pulled;
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(seen.closed).toBe(true);
    expect(seen.aborted).toBe(true);
    expect(seen.pulled).toBe(pulled);
    expect(seen.pulled).toBeLessThan(100);
    await expect(
      make("replay").stream(req, async () => ({ head: {}, events: upstreamEvents([]) })),
    ).rejects.toBeInstanceOf(ReplayMissError);
  });

  it("a reader that stops while a read is pending still closes the upstream (through the signal)", async () => {
    store = openStore("memory://");
    let aborted = false;
    async function* stalls(signal: AbortSignal) {
      yield { delta: "first" };
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      aborted = true;
    }
    const r = make("auto");
    const { events } = await r.stream(req, async ({ signal }) => ({
      head: {},
      events: stalls(signal),
    }));
    const it = events[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual({ delta: "first" });
    const pending = it.next();
    await it.return?.();
    expect(await pending).toEqual({ done: true, value: undefined });
    await new Promise((r) => setImmediate(r));
    expect(aborted).toBe(true);
  });

  it("past maxEntryBytes: buffering stops at the limit, nothing is stored, the reader still gets every event", async () => {
    store = openStore("memory://");
    const r = make("auto", 20_000);
    const warnings: RecorderEvents["warning"][] = [];
    r.on("warning", (w) => warnings.push(w));
    const parts = Array.from({ length: 2_000 }, (_, i) => `${i}:${"x".repeat(100)}`);
    const { events } = await r.stream(req, async () => ({
      head: {},
      events: upstreamEvents(parts),
    }));
    const got: string[] = [];
    let warnedBy: number | undefined;
    for await (const e of events) {
      got.push(e.delta);
      if (warnedBy === undefined && warnings.length > 0) warnedBy = got.length;
    }
    expect(got).toEqual(parts);
    // Recording was given up when the limit was passed (~170 events), not at the end.
    expect(warnedBy).toBeDefined();
    expect(warnedBy!).toBeLessThan(400);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.error).toBeInstanceOf(EntryTooLargeError);
    expect(warnings[0]!.message).toMatch(/streamed response .* passed the 20000-byte entry limit/);
    expect(r.stats.recorded).toBe(0);
    await expect(
      make("replay").stream(req, async () => ({ head: {}, events: upstreamEvents([]) })),
    ).rejects.toBeInstanceOf(ReplayMissError);

    // record mode: every event still arrives, then the EntryTooLargeError.
    const rec = make("record", 20_000);
    const recorded = await rec.stream(req, async () => ({
      head: {},
      events: upstreamEvents(parts),
    }));
    const live: string[] = [];
    const error = await (async () => {
      for await (const e of recorded.events) live.push(e.delta);
    })().catch((e: unknown) => e);
    expect(live).toEqual(parts);
    expect(error).toBeInstanceOf(EntryTooLargeError);
  });
});
