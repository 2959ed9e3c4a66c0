/**
 * createFetch identities that used to merge different questions: query
 * parameters dropped because their name merely contained "key", "token",
 * "auth"…; the host left out, so two providers shared an answer; fenced code
 * whose indentation was lost in the JSON prompt. Real loopback servers.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createFetch,
  describeHttpCall,
  SECRET_QUERY_PARAMS,
  VOLATILE_BODY_FIELDS,
} from "../../src/adapters/index.js";
import { createRecorder, type Recorder } from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { modelOf } from "../helpers/model-manifest.js";

let a: FakeProvider;
let b: FakeProvider;
let recorders: Recorder[];

beforeEach(async () => {
  [a, b] = await Promise.all([startFakeProvider(), startFakeProvider()]);
  recorders = [];
});
afterEach(async () => {
  for (const r of recorders) await r.close();
  await Promise.all([a.close(), b.close()]);
});

function recorder(mode: "auto" | "replay", store?: Recorder["store"]): Recorder {
  const r = createRecorder({ store: store ?? "memory://", mode, env: {} });
  recorders.push(r);
  return r;
}

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const chat = (content = "hello") => ({
  model: "gpt-fake",
  messages: [{ role: "user", content }],
});

const describeUrl = (url: string) =>
  describeHttpCall(new URL(url), chat(), new Set(VOLATILE_BODY_FIELDS));

describe("query parameters", () => {
  it.each([
    ["author", "alice", "bob"],
    ["design", "a", "b"],
    ["keywords", "x", "y"],
    ["max_tokens", "10", "4000"],
    ["monkey", "1", "2"],
    ["tokenizer", "cl100k", "o200k"],
    ["signal", "a", "b"],
  ])("?%s= stays in the identity (%s vs %s)", (name, x, y) => {
    const one = describeUrl(`https://api.example/v1/chat?${name}=${x}`);
    const two = describeUrl(`https://api.example/v1/chat?${name}=${y}`);
    expect(one.params[":query"]).toEqual({ [name]: x });
    expect(two.params[":query"]).toEqual({ [name]: y });
  });

  it.each([
    "key",
    "api_key",
    "api-key",
    "apikey",
    "API_KEY",
    "token",
    "access_token",
    "sig",
    "signature",
    "code",
    "subscription-key",
    "X-Amz-Signature",
    "X-Amz-Credential",
    "x-amz-security-token",
    "X-Goog-Signature",
  ])("?%s= is a credential: left out", (name) => {
    const d = describeUrl(`https://api.example/v1/chat?${name}=s3cr3t-value&api-version=1`);
    expect(d.params[":query"]).toEqual({ "api-version": "1" });
    expect(SECRET_QUERY_PARAMS.some((p) => name.toLowerCase().startsWith(p.replace("*", "")))).toBe(
      true,
    );
  });

  it("never stores a ?code= (Azure Functions key) and still replays across keys", async () => {
    const store = recorder("auto").store;
    const f = createFetch({ recorder: recorder("auto", store) });
    await (
      await f(`${a.url}/v1/chat/completions?code=AzFnKey-1&author=alice`, post(chat()))
    ).json();
    const replay = createFetch({ recorder: recorder("replay", store) });
    const again = await replay(
      `${a.url}/v1/chat/completions?code=AzFnKey-2&author=alice`,
      post(chat()),
    );
    expect(again.status).toBe(200);
    expect(a.calls).toBe(1);
    const listed: unknown[] = [];
    for await (const entry of store.list("")) listed.push(entry);
    const entries = JSON.stringify(listed);
    expect(entries).not.toContain("AzFnKey");
    expect(entries).toContain("alice");
  });
});

describe("host", () => {
  it("is part of the identity: the same call to two servers is two recordings", async () => {
    const r = recorder("auto");
    const f = createFetch({ recorder: r });
    const one = await (await f(`${a.url}/v1/chat/completions`, post(chat()))).json();
    const two = await (await f(`${b.url}/v1/chat/completions`, post(chat()))).json();
    expect([a.calls, b.calls]).toEqual([1, 1]);
    expect(one).toBeDefined();
    expect(two).toBeDefined();
    expect(modelOf(r.last?.manifest).params?.[":host"]).toBe(b.url);
  });

  it("hostAliases map gateway hosts to one name (object, by host or origin)", async () => {
    const store = recorder("auto").store;
    const aliases = { [new URL(a.url).host]: "openai", [b.url]: "openai" };
    const r = recorder("auto", store);
    const f = createFetch({ recorder: r, hostAliases: aliases });
    await (await f(`${a.url}/v1/chat/completions`, post(chat()))).json();
    expect(modelOf(r.last?.manifest).params?.[":host"]).toBe("openai");
    const replay = createFetch({ recorder: recorder("replay", store), hostAliases: aliases });
    expect((await replay(`${b.url}/v1/chat/completions`, post(chat()))).status).toBe(200);
    expect([a.calls, b.calls]).toEqual([1, 0]);
  });

  it("hostAliases as a function; undefined keeps the origin", async () => {
    const d = (url: string, hostAliases: (u: URL) => string | undefined) =>
      describeHttpCall(new URL(url), chat(), new Set(), hostAliases).params[":host"];
    const alias = (u: URL) => (u.hostname.endsWith(".gw.example") ? "openai" : undefined);
    expect(d("https://eu.gw.example/v1/x", alias)).toBe("openai");
    expect(d("https://api.openai.com:443/v1/x", alias)).toBe("https://api.openai.com");
    expect(d("http://127.0.0.1:8080/v1/x", alias)).toBe("http://127.0.0.1:8080");
  });

  it("refuses a malformed hostAliases", () => {
    const r = recorder("auto");
    expect(() => createFetch({ recorder: r, hostAliases: 3 as never })).toThrow(
      /hostAliases must be/,
    );
    expect(() => createFetch({ recorder: r, hostAliases: { "gw.example": "" } })).toThrow(
      /hostAliases\["gw.example"\]/,
    );
  });
});

describe("fenced code in a conversation", () => {
  it("two programs differing only in indentation are two identities", async () => {
    const program = (body: string) =>
      `Does this print 3 or 0 1 2?\n\n\`\`\`python\nfor i in range(3):\n    x = i\n${body}print(x)\n\`\`\``;
    const r = recorder("auto");
    const f = createFetch({ recorder: r });
    await (await f(`${a.url}/v1/chat/completions`, post(chat(program("    "))))).json();
    const inside = modelOf(r.last?.manifest).prompt;
    await (await f(`${a.url}/v1/chat/completions`, post(chat(program(""))))).json();
    const after = modelOf(r.last?.manifest).prompt;
    expect(a.calls).toBe(2);
    expect(inside).toContain("\\n    x = i\\n    print(x)\\n```");
    expect(after).toContain("\\n    x = i\\nprint(x)\\n```");
  });
});

describe("fenced code through the AI SDK middleware", () => {
  it("keeps indentation in the prompt, so the two programs are two identities", async () => {
    const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
    const { generateText, wrapLanguageModel } = await import("ai");
    const { invocacheMiddleware } = await import("../../src/adapters/index.js");
    const r = recorder("auto");
    const fake = createOpenAICompatible({ name: "fake", baseURL: `${a.url}/v1`, apiKey: "k" });
    const m = wrapLanguageModel({
      model: fake.chatModel("fake-chat"),
      middleware: invocacheMiddleware({ recorder: r }),
    });
    const ask = async (body: string) => {
      await generateText({
        model: m,
        prompt: `What prints?\n\n\`\`\`python\nfor i in range(3):\n    x = i\n${body}print(x)\n\`\`\``,
        maxRetries: 0,
      });
      return modelOf(r.last?.manifest).prompt;
    };
    const inside = await ask("    ");
    const after = await ask("");
    expect(a.calls).toBe(2);
    expect(inside).toContain("\\n    x = i\\n    print(x)\\n```");
    expect(after).toContain("\\n    x = i\\nprint(x)\\n```");
  });
});
