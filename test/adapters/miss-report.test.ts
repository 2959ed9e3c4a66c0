/**
 * One prompt, three ways in (recorder.call, createFetch, the AI SDK
 * middleware): a replay miss reports the same normalization rules fired,
 * because the identity normalizes the conversation itself, once.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, wrapLanguageModel } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch, invocacheMiddleware, withInvocation } from "../../src/adapters/index.js";
import { createRecorder, openStore, type Recorder, ReplayMissError } from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

const PROJECT = "/srv/checkout-42";
const PROMPT = `Fix ${PROJECT}/src/a.ts (session 3f2504e0-4f89-11d3-9a0c-0305e82c3301) at 2026-09-09T10:00:00Z`;
const EXPECTED = { "root:project": 1, uuid: 1, timestamp: 1 };

let provider: FakeProvider;
let recorder: Recorder;

beforeEach(async () => {
  provider = await startFakeProvider();
  recorder = createRecorder({ store: "memory://", mode: "replay", env: {} });
});
afterEach(async () => {
  await recorder.close();
  await provider.close();
});

async function missOf(p: Promise<unknown>): Promise<ReplayMissError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  const miss = error instanceof ReplayMissError ? error : (error as { cause?: unknown })?.cause;
  expect(miss).toBeInstanceOf(ReplayMissError);
  return miss as ReplayMissError;
}

describe("a replay miss reports the rules fired, whichever way the prompt came in", () => {
  it("recorder.call", async () => {
    const miss = await missOf(
      recorder.call({ role: "default", prompt: PROMPT, projectPath: PROJECT }, async () => "x"),
    );
    expect(miss.rulesFired).toEqual(EXPECTED);
  });

  it("createFetch", async () => {
    const f = createFetch({ recorder, onMiss: "throw" });
    const miss = await missOf(
      withInvocation({ projectPath: PROJECT }, () =>
        f(`${provider.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: PROMPT }] }),
        }),
      ),
    );
    expect(miss.rulesFired).toEqual(EXPECTED);
    expect(miss.message).toContain("Normalization applied: root:project ×1");
  });

  it("the AI SDK middleware", async () => {
    const fake = createOpenAICompatible({ name: "fake", baseURL: `${provider.url}/v1` });
    const model = wrapLanguageModel({
      model: fake.chatModel("fake-chat"),
      middleware: invocacheMiddleware({ recorder }),
    });
    const miss = await missOf(
      withInvocation({ projectPath: PROJECT }, () =>
        generateText({ model, prompt: PROMPT, maxRetries: 0 }),
      ),
    );
    expect(miss.rulesFired).toEqual(EXPECTED);
  });
});

describe("a miss whose only difference is a loopback port", () => {
  const ask = (f: typeof fetch, url: string, content = "hello") =>
    f(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content }] }),
    });

  it("says so and names hostAliases; with the alias, the other port replays", async () => {
    const other = await startFakeProvider();
    const store = openStore("memory://");
    try {
      const rec = createRecorder({ store, mode: "auto", env: {} });
      await (await ask(createFetch({ recorder: rec }), provider.url)).json();
      const replay = createRecorder({ store, mode: "replay", env: {} });
      const miss = await missOf(ask(createFetch({ recorder: replay, onMiss: "throw" }), other.url));
      const port = new URL(other.url).port;
      expect(miss.message).toContain(
        `Only the loopback port differs: :host was ${provider.url} when recorded, ${other.url} now`,
      );
      expect(miss.message).toContain(`hostAliases: { "127.0.0.1:${port}": "fake" }`);
      // A different prompt too: not only the port, so no such line.
      const mixed = await missOf(
        ask(createFetch({ recorder: replay, onMiss: "throw" }), other.url, "bye"),
      );
      expect(mixed.message).not.toContain("loopback port");

      // The fix it names works: a fixed name for the loopback host replays across ports.
      const hostAliases = (url: URL) => (url.hostname === "127.0.0.1" ? "fake" : undefined);
      const calls = other.calls;
      await (await ask(createFetch({ recorder: rec, hostAliases }), provider.url)).json();
      const served = await ask(createFetch({ recorder: replay, hostAliases }), other.url);
      expect(served.status).toBe(200);
      expect(other.calls).toBe(calls);
      await rec.close();
      await replay.close();
    } finally {
      await other.close();
      await store.close();
    }
  });
});
