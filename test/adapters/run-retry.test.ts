/**
 * An SDK retry inside a run scope: the failed attempt (a 429) gives its
 * occurrence back, so the successful retry is occurrence 0 and a replay of
 * the run, which makes no failed attempt, finds it.
 */
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch, withInvocation } from "../../src/adapters/index.js";
import { createRecorder, type Recorder } from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

let provider: FakeProvider;
let recorders: Recorder[];
beforeEach(async () => {
  provider = await startFakeProvider();
  recorders = [];
});
afterEach(async () => {
  for (const r of recorders) await r.close();
  await provider.close();
});

function recorder(mode: "auto" | "replay", store?: Recorder["store"]): Recorder {
  const r = createRecorder({ store: store ?? "memory://", mode, env: {} });
  recorders.push(r);
  return r;
}

const client = (r: Recorder, maxRetries: number) =>
  new OpenAI({
    apiKey: "sk-x",
    baseURL: `${provider.url}/v1`,
    fetch: createFetch({ recorder: r }),
    maxRetries,
  });
const ask = (openai: OpenAI) =>
  withInvocation({ role: "builder" }, () =>
    openai.chat.completions.create({
      model: "gpt-fake",
      messages: [{ role: "user", content: "Build it" }],
    }),
  );

describe("SDK retries inside a run", () => {
  it("a 429 retried by the SDK inside recorder.run records the answer as occurrence 0; the run replays", async () => {
    const live = recorder("auto");
    provider.fail("rate-limit");
    const answer = await live.run(async (run) => {
      const out = await ask(client(live, 1));
      expect(run.calls.map((c) => c.occurrence)).toEqual([0]);
      return out;
    });
    expect(provider.calls).toBe(2);
    expect(live.stats.recorded).toBe(1);
    await provider.close();

    const replay = recorder("replay", live.store);
    const again = await replay.run(() => ask(client(replay, 0)));
    expect(again.choices[0]?.message.content).toBe(answer.choices[0]?.message.content);
    expect(replay.stats.hits).toBe(1);
  });
});
