/**
 * createFetch({ recordErrors }): chosen HTTP error answers (429, 500) are
 * recorded with their bodies and retry headers, so the OpenAI SDK's retry
 * logic replays offline. Never by default, never a network failure.
 */
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch } from "../../src/adapters/index.js";
import type { Recorder } from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { sqliteSandbox, storedResponses } from "./helpers.js";

let provider: FakeProvider;
let sandbox: Awaited<ReturnType<typeof sqliteSandbox>>;
beforeEach(async () => {
  provider = await startFakeProvider();
  sandbox = await sqliteSandbox();
});
afterEach(async () => {
  await provider.close();
  await sandbox.cleanup();
});

/** An OpenAI client whose fetch also counts every attempt the SDK makes. */
function client(recorder: Recorder, recordErrors?: number[]) {
  const attempts: number[] = [];
  const inner = createFetch({ recorder, ...(recordErrors ? { recordErrors } : {}) });
  const counting: typeof fetch = async (input, init) => {
    const res = await inner(input, init);
    attempts.push(res.status);
    return res;
  };
  const openai = new OpenAI({
    apiKey: "sk-test-not-a-real-key",
    baseURL: `${provider.url}/v1`,
    fetch: counting,
    maxRetries: 2,
  });
  return { openai, attempts };
}

const ask = (openai: OpenAI) =>
  openai.chat.completions.create({
    model: "gpt-fake",
    messages: [{ role: "user", content: "hi" }],
  });

describe("createFetch recordErrors", () => {
  it("records 429 then 200 inside a run and replays the retry with the provider stopped", async () => {
    const rec = sandbox.recorder("record");
    const live = client(rec, [429, 500]);
    provider.fail("rate-limit");
    const first = await rec.run(() => ask(live.openai), { runId: "retry-test" });
    expect(live.attempts).toEqual([429, 200]);
    const stored = (await storedResponses(rec)) as Array<{
      status: number;
      headers: Record<string, string>;
      body: unknown;
    }>;
    const limited = stored.find((r) => r.status === 429);
    expect(limited?.headers["retry-after-ms"]).toBe("5");
    expect(JSON.stringify(limited?.body)).toContain("rate limited");
    await rec.close();
    await provider.close();

    const replay = sandbox.recorder("replay");
    const again = client(replay, [429, 500]);
    const second = await replay.run(() => ask(again.openai), { runId: "retry-test" });
    expect(again.attempts).toEqual([429, 200]);
    expect(second.choices[0]?.message.content).toBe(first.choices[0]?.message.content);
    expect(replay.stats.hits).toBe(2);
  });

  it("a 500 is replayed as the SDK's error when retries are exhausted", async () => {
    const rec = sandbox.recorder("record");
    const live = client(rec, [500]);
    provider.fail("error", "error", "error");
    const error = await rec.run(() => ask(live.openai), { runId: "e" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    await rec.close();
    await provider.close();
    const replay = sandbox.recorder("replay");
    const again = client(replay, [500]);
    const replayed = await replay.run(() => ask(again.openai), { runId: "e" }).catch((e) => e);
    expect(replayed).toBeInstanceOf(OpenAI.InternalServerError);
    expect(again.attempts).toEqual([500, 500, 500]);
  });

  it("never by default: a 429 is not stored without the opt-in", async () => {
    const rec = sandbox.recorder("record");
    const live = client(rec);
    provider.fail("rate-limit");
    await rec.run(() => ask(live.openai));
    const stored = (await storedResponses(rec)) as Array<{ status: number }>;
    expect(stored.map((r) => r.status)).toEqual([200]);
  });

  it("never a network failure, even with the opt-in", async () => {
    const rec = sandbox.recorder("record");
    const live = client(rec, [429, 500, 502, 503]);
    await provider.close();
    await expect(ask(live.openai)).rejects.toThrow();
    expect(await storedResponses(rec)).toEqual([]);
  });

  it("bad statuses are a TypeError naming the option", () => {
    const rec = sandbox.recorder("record");
    expect(() => createFetch({ recorder: rec, recordErrors: [200] })).toThrow(
      /recordErrors must list HTTP error statuses 400-599/,
    );
    expect(() => createFetch({ recorder: rec, recordErrors: 429 as never })).toThrow(
      /recordErrors must be an array/,
    );
  });
});
