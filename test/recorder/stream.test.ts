import { afterEach, describe, expect, it } from "vitest";
import {
  createRecorder,
  type InvocationRequest,
  openStore,
  type Recorder,
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
  const make = (mode: "auto" | "replay" | "record") => {
    const r = createRecorder({ store, mode, identity: machine });
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
  });
});
