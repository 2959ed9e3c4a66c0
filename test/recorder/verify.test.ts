import { describe, expect, it } from "vitest";
import { createRecorder, openStore, type RecorderEvents } from "../../src/index.js";

const KEY = "sk-proj-Zq9Xv8Wu7Ts6Rq5Po4Nm3Lk2Jh1";
const env = { OPENAI_API_KEY: KEY };
const req = { role: "builder", model: "gpt-5", prompt: "Echo the key" };

/** Record `first` in auto mode, then verify against `second`; the divergences seen. */
async function verifyAgainst(first: unknown, second: unknown) {
  const store = openStore("memory://");
  const auto = createRecorder({ store, mode: "auto", secrets: { env } });
  await auto.call(req, async () => first);
  const verify = createRecorder({ store, mode: "verify", secrets: { env } });
  const seen: RecorderEvents["divergence"][] = [];
  verify.on("divergence", (d) => seen.push(d));
  const live = await verify.call(req, async () => second);
  await auto.close();
  await verify.close();
  await store.close();
  return { seen, live, stats: verify.stats };
}

describe("verify compares like with like", () => {
  it("an identical live response that contains a secret is not a divergence", async () => {
    const answer = { text: `your key is ${KEY}`, finish_reason: "stop" };
    const { seen, live, stats } = await verifyAgainst(answer, structuredClone(answer));
    // The caller still gets the live value, secret included.
    expect(live).toEqual(answer);
    expect(seen).toEqual([]);
    expect(stats.divergences).toBe(0);
  });

  it("a response that differs only in key order is not a divergence", async () => {
    const { seen, stats } = await verifyAgainst(
      { text: "hi", usage: { a: 1, b: 2 } },
      { usage: { b: 2, a: 1 }, text: "hi" },
    );
    expect(seen).toEqual([]);
    expect(stats.divergences).toBe(0);
  });

  it("a response that really differs is still a divergence, reported redacted", async () => {
    const { seen, stats } = await verifyAgainst(
      { text: `key ${KEY}`, n: 1 },
      { text: `key ${KEY}`, n: 2 },
    );
    expect(stats.divergences).toBe(1);
    expect(seen).toMatchObject([
      {
        kind: "response",
        expected: { text: "key {secret:OPENAI_API_KEY}", n: 1 },
        actual: { text: "key {secret:OPENAI_API_KEY}", n: 2 },
      },
    ]);
  });
});

describe("verify compares streams by their events, not their timing", () => {
  /** Stream `events` through recorder.stream with a pause before each; read them all. */
  async function streamOnce(
    rec: ReturnType<typeof createRecorder>,
    events: string[],
    pauseMs: number,
  ): Promise<string[]> {
    const { events: out } = await rec.stream<{ status: number }, string>(req, async () => ({
      head: { status: 200 },
      events: (async function* () {
        for (const e of events) {
          await new Promise((r) => setTimeout(r, pauseMs));
          yield e;
        }
      })(),
    }));
    const got: string[] = [];
    for await (const e of out) got.push(e);
    return got;
  }

  it("the same events at other times are not a divergence; other events are", async () => {
    const store = openStore("memory://");
    const auto = createRecorder({ store, mode: "auto" });
    await streamOnce(auto, ["a", "b", "c"], 5);
    const verify = createRecorder({ store, mode: "verify" });
    const seen: RecorderEvents["divergence"][] = [];
    verify.on("divergence", (d) => seen.push(d));
    // Same events, read at other moments: headAt and every `t` differ.
    expect(await streamOnce(verify, ["a", "b", "c"], 25)).toEqual(["a", "b", "c"]);
    expect(seen).toEqual([]);
    expect(verify.stats.divergences).toBe(0);
    // A changed event is a divergence.
    await streamOnce(verify, ["a", "B", "c"], 5);
    expect(seen).toHaveLength(1);
    expect(verify.stats.divergences).toBe(1);
    await auto.close();
    await verify.close();
    await store.close();
  });
});
