/**
 * withCassette({ global: true }) under vitest: an OpenAI client created
 * without our fetch records into the test's cassette, and replays from it
 * with the provider gone; fetch is put back after the body.
 */
import { existsSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withCassette } from "../../src/testing/vitest.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { tempDir } from "../helpers/tmp.js";

const original = globalThis.fetch;
let provider: FakeProvider;
let url: string;
const root = tempDir("vitest-global");
beforeAll(async () => {
  provider = await startFakeProvider();
  url = provider.url;
});
afterAll(() => provider.close());

async function ask(): Promise<string | null | undefined> {
  const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, maxRetries: 0 });
  const r = await openai.chat.completions.create({
    model: "gpt-fake",
    messages: [{ role: "user", content: "plan" }],
  });
  return r.choices[0]?.message.content;
}

const shared = { name: "global/planner", root, summary: false };
let live: string | null | undefined;

describe.sequential("withCassette global mode", () => {
  it(
    "records a client made without our fetch",
    withCassette({ ...shared, mode: "record", global: true }, async ({ recorder }) => {
      expect(globalThis.fetch).not.toBe(original); // intercepted during the body
      live = await ask();
      expect(recorder.stats.recorded).toBe(1);
      expect(provider.calls).toBe(1);
    }),
  );

  it("put fetch back after the body", () => {
    expect(globalThis.fetch).toBe(original);
    expect(existsSync(`${root}/cassettes/global/planner.yaml`)).toBe(true);
  });

  it(
    "replays it with the provider gone",
    withCassette({ ...shared, mode: "replay", global: true }, async ({ recorder }) => {
      await provider.close();
      expect(await ask()).toBe(live);
      expect(recorder.stats.hits).toBe(1);
    }),
  );
});
