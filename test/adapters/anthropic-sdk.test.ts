/**
 * The real `@anthropic-ai/sdk` through createFetch, against the fake
 * provider over loopback HTTP: record, stop the provider, replay.
 */
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { createFetch, withInvocation } from "../../src/adapters/index.js";
import type { Recorder } from "../../src/index.js";
import { sdkSuite } from "../helpers/sdk-suite.js";
import { collect, storedResponses } from "./helpers.js";

const { key: KEY, provider, sandbox } = sdkSuite("sk-ant-live-");

function client(recorder: Recorder, maxRetries = 0): Anthropic {
  return new Anthropic({
    apiKey: KEY,
    baseURL: provider.url,
    fetch: createFetch({ recorder }),
    maxRetries,
  });
}

const request = {
  model: "claude-fake",
  max_tokens: 256,
  system: "You review diffs.",
  messages: [{ role: "user" as const, content: "Review the change to src/a.ts" }],
};

async function everything(anthropic: Anthropic) {
  return withInvocation({ role: "reviewer" }, async () => {
    const message = await anthropic.messages.create(request);
    const events = await collect(await anthropic.messages.create({ ...request, stream: true }));
    const helper = anthropic.messages.stream({ ...request, temperature: 0.2 });
    const texts: string[] = [];
    helper.on("text", (t) => texts.push(t));
    const final = await helper.finalMessage();
    return { message, requestId: message._request_id, events, texts, final };
  });
}

describe("@anthropic-ai/sdk through createFetch", () => {
  it("records messages (plain, streamed, and the stream helper), then replays them identically with zero upstream calls", async () => {
    const auto = sandbox.recorder("auto");
    const live = await everything(client(auto));
    expect(provider.calls).toBe(3);
    expect(live.message.content[0]).toMatchObject({
      type: "text",
      text: "reply #1 from claude-fake to: Review the change to src/a.ts",
    });
    expect(live.events.at(-1)?.type).toBe("message_stop");
    expect(live.texts.join("")).toBe("reply #3 from claude-fake to: Review the change to src/a.ts");
    await auto.close();
    await provider.close();

    const replay = sandbox.recorder("replay");
    const again = await everything(client(replay));
    expect(again).toEqual(live);
    expect(again.requestId).toBe("req_fake_1"); // read from the replayed request-id header
    expect(replay.stats).toMatchObject({ hits: 3, misses: 0 });
  });

  it("the API key reaches the provider live and appears nowhere in the SQLite file", async () => {
    const anthropic = client(sandbox.recorder("auto"));
    await anthropic.messages.create(request);
    await collect(await anthropic.messages.create({ ...request, stream: true }));
    // This SDK version sends the key as `authorization: Bearer …`; older ones as x-api-key.
    expect(JSON.stringify(provider.requests[0]?.headers)).toContain(KEY);
    const bytes = await sandbox.bytes();
    expect(bytes.includes("req_fake_1")).toBe(true);
    expect(bytes.includes(KEY)).toBe(false);
    expect(bytes.includes("cookie-secret")).toBe(false);
    expect(bytes.includes("anthropic-version")).toBe(false);
  });

  it("a changed max_tokens or system prompt is a miss that names the field", async () => {
    const recorder = sandbox.recorder("auto");
    await client(recorder).messages.create(request);
    await recorder.close();
    const anthropic = client(sandbox.recorder("replay"));
    const miss = (p: Promise<unknown>) => p.catch((e: unknown) => e);

    // A miss is answered as a 404 carrying the miss report: the SDK's own error shows it.
    const longer = await miss(anthropic.messages.create({ ...request, max_tokens: 512 }));
    expect(longer).toBeInstanceOf(Anthropic.NotFoundError);
    expect((longer as Error).message).toContain("params.max_tokens: 256 → 512");
    const otherSystem = await miss(anthropic.messages.create({ ...request, system: "Be nice." }));
    expect(otherSystem).toBeInstanceOf(Anthropic.NotFoundError);
    expect((otherSystem as Error).message).toMatch(/differs in:\n {4}- prompt/);
  });

  it("errors, 429s, max_tokens answers and in-band stream errors are never stored", async () => {
    const recorder = sandbox.recorder("auto");
    const anthropic = client(recorder);

    provider.fail("error");
    await expect(anthropic.messages.create(request)).rejects.toBeInstanceOf(
      Anthropic.InternalServerError,
    );
    provider.fail("rate-limit");
    await expect(anthropic.messages.create(request)).rejects.toBeInstanceOf(
      Anthropic.RateLimitError,
    );
    provider.fail("truncate");
    expect((await anthropic.messages.create(request)).stop_reason).toBe("max_tokens");
    provider.fail("truncate");
    const events = await collect(await anthropic.messages.create({ ...request, stream: true }));
    expect(events.find((e) => e.type === "message_delta")).toMatchObject({
      delta: { stop_reason: "max_tokens" },
    });
    provider.fail("in-band-error");
    await expect(
      collect(await anthropic.messages.create({ ...request, stream: true })),
    ).rejects.toThrow("Overloaded");

    expect(provider.calls).toBe(5);
    expect(await storedResponses(recorder)).toEqual([]);
  });

  it("a retried 429 then 200 records once", async () => {
    const recorder = sandbox.recorder("auto");
    provider.fail("rate-limit");
    const message = await client(recorder, 1).messages.create(request);
    expect(provider.calls).toBe(2);
    expect(await storedResponses(recorder)).toHaveLength(1);
    expect(await client(recorder).messages.create(request)).toEqual(message);
    expect(provider.calls).toBe(2);
  });
});
