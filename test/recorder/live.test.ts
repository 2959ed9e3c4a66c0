import { describe, expect, it } from "vitest";
import { answerLive, createRecorder, openStore, type RecorderEvents } from "../../src/index.js";

const req = { role: "builder", model: "gpt-5", prompt: "Build it" };

describe("answerLive: answer this live, store nothing", () => {
  it("hands the value back, stores nothing, reports a bypass", async () => {
    const store = openStore("memory://");
    const r = createRecorder({ store, mode: "auto" });
    const bypasses: RecorderEvents["bypass"][] = [];
    r.on("bypass", (b) => bypasses.push(b));
    const live = await r.call(req, async () => answerLive({ status: 429 }));
    expect(live).toEqual({ status: 429 });
    expect(r.stats.recorded).toBe(0);
    expect(bypasses.map((b) => b.reason)).toEqual(["answered live (answerLive): not stored"]);
    // Nothing was stored: the next call goes upstream and is recorded.
    expect(await r.call(req, async () => ({ text: "ok" }))).toEqual({ text: "ok" });
    expect(await r.call(req, async () => ({ text: "never called" }))).toEqual({ text: "ok" });
    expect(r.stats.recorded).toBe(1);
    await r.close();
    await store.close();
  });

  it("inside a run, a live answer gives its occurrence back (like a failed call)", async () => {
    const store = openStore("memory://");
    const r = createRecorder({ store, mode: "auto" });
    await r.run(async (run) => {
      await r.call(req, async () => answerLive("rate limited"));
      await r.call(req, async () => "recorded");
      expect(run.calls.map((c) => c.occurrence)).toEqual([0]);
    });
    const replay = createRecorder({ store, mode: "replay" });
    await replay.run(async () => {
      expect(await replay.call(req, async () => "unused")).toBe("recorded");
    });
    await r.close();
    await replay.close();
    await store.close();
  });

  it("single-flight followers of a live answer make their own call", async () => {
    const store = openStore("memory://");
    const r = createRecorder({ store, mode: "auto" });
    let calls = 0;
    const fn = async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return answerLive({ status: 503, n: calls });
    };
    const answers = await Promise.all([r.call(req, fn), r.call(req, fn), r.call(req, fn)]);
    expect(calls).toBe(3);
    expect(answers.map((a) => (a as { status: number }).status)).toEqual([503, 503, 503]);
    expect(r.stats.recorded).toBe(0);
    await r.close();
    await store.close();
  });

  it("recorder.stream: fn may answer live, handed back as { live }", async () => {
    const store = openStore("memory://");
    const r = createRecorder({ store, mode: "auto" });
    const result = await r.stream<{ s: number }, string, string>(req, async () =>
      answerLive("not a stream"),
    );
    expect(result).toEqual({ live: "not a stream", hit: false });
    expect(r.stats.recorded).toBe(0);
    await r.close();
    await store.close();
  });
});
