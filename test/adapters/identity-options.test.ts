/**
 * The adapters normalize with the recorder's own `identity` options (home
 * folder, extra roots, turned-off rules), not with defaults of their own: a
 * call recorded on one machine replays on another whose recorder names its
 * folders differently, and a rule the recorder turned off stays off.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, wrapLanguageModel } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch, invocacheMiddleware } from "../../src/adapters/index.js";
import { createRecorder, type Recorder, type RecorderOptions } from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { modelOf } from "../helpers/model-manifest.js";

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

function recorder(
  mode: "auto" | "replay",
  identity: NonNullable<RecorderOptions["identity"]>,
  store?: Recorder["store"],
): Recorder {
  const r = createRecorder({ store: store ?? "memory://", mode, env: {}, identity });
  recorders.push(r);
  return r;
}

const ALICE = { homeDir: "/home/alice", tmpDirs: ["/tmp"], roots: { cache: "/var/cache/a" } };
const BOB = { homeDir: "/users/bob", tmpDirs: ["/tmp"], roots: { cache: "/srv/cache-b" } };

function chatOn(r: Recorder, content: string): Promise<Response> {
  return createFetch({ recorder: r })(`${provider.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x" },
    body: JSON.stringify({ model: "gpt-fake", messages: [{ role: "user", content }] }),
  });
}

describe("adapters use the recorder's identity options", () => {
  it("createFetch: the recorder's homeDir and roots shape the prompt; another machine's recorder replays it", async () => {
    const alice = recorder("auto", ALICE);
    await (await chatOn(alice, "Read /home/alice/app/a.ts and /var/cache/a/x.json")).text();
    expect(modelOf(alice.last?.manifest).prompt).toBe(
      '{"messages":[{"content":"Read {home}/app/a.ts and {cache}/x.json","role":"user"}]}',
    );
    expect(provider.calls).toBe(1);

    const bob = recorder("replay", BOB, alice.store);
    const replayed = await chatOn(bob, "Read /users/bob/app/a.ts and /srv/cache-b/x.json");
    expect(replayed.status).toBe(200);
    await replayed.text();
    expect(bob.stats.hits).toBe(1);
    expect(provider.calls).toBe(1);
  });

  it("createFetch: a rule the recorder turned off stays off", async () => {
    const r = recorder("auto", { ...ALICE, disableRules: ["uuid"] });
    const uuid = "0b8f9a62-5d0e-4c4b-9a3e-2f1d7c6b5a49";
    await (await chatOn(r, `job ${uuid}`)).text();
    expect(modelOf(r.last?.manifest).prompt).toBe(
      `{"messages":[{"content":"job ${uuid}","role":"user"}]}`,
    );
  });

  it("AI SDK middleware: the recorder's homeDir and roots shape the prompt; another machine's recorder replays it", async () => {
    const model = (r: Recorder) =>
      wrapLanguageModel({
        model: createOpenAICompatible({
          name: "fake",
          baseURL: `${provider.url}/v1`,
          apiKey: "sk-x",
        }).chatModel("fake-chat"),
        middleware: [invocacheMiddleware({ recorder: r })],
      });
    const alice = recorder("auto", ALICE);
    const live = await generateText({
      model: model(alice),
      prompt: "Read /home/alice/app/a.ts and /var/cache/a/x.json",
      maxRetries: 0,
    });
    expect(modelOf(alice.last?.manifest).prompt).toContain(
      "Read {home}/app/a.ts and {cache}/x.json",
    );
    expect(modelOf(alice.last?.manifest).prompt).not.toContain("/home/alice");

    const bob = recorder("replay", BOB, alice.store);
    const again = await generateText({
      model: model(bob),
      prompt: "Read /users/bob/app/a.ts and /srv/cache-b/x.json",
      maxRetries: 0,
    });
    expect(again.text).toBe(live.text);
    expect(bob.stats.hits).toBe(1);
    expect(provider.calls).toBe(1);
  });
});
