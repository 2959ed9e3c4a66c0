/**
 * createFetch on its own: what passes through, how a request maps to an
 * identity, what a replayed Response looks like, byte for byte.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch, VOLATILE_BODY_FIELDS, withInvocation } from "../../src/adapters/index.js";
import { createRecorder, type Recorder, ReplayMissError } from "../../src/index.js";
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

function recorder(mode: "auto" | "replay", store?: Recorder["store"]): Recorder {
  const r = createRecorder({ store: store ?? "memory://", mode, env: {} });
  recorders.push(r);
  return r;
}

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer sk-x", ...headers },
  body: JSON.stringify(body),
});

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "gpt-fake",
  messages: [{ role: "user", content: "hello" }],
  ...extra,
});

/** Every chunk of a body, as text. */
async function chunks(res: Response): Promise<string[]> {
  const out: string[] = [];
  const decoder = new TextDecoder();
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>)
    out.push(decoder.decode(c));
  return out;
}

describe("createFetch", () => {
  it("passes through GETs, non-JSON bodies, malformed JSON and JSON that is not a model call", async () => {
    const r = recorder("auto");
    const f = createFetch({ recorder: r });
    const url = `${provider.url}/v1/chat/completions`;
    expect((await f(`${provider.url}/v1/models`)).status).toBe(404);
    await f(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" });
    await f(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{oops",
    });
    await f(url, json({ grant_type: "client_credentials", assertion: "jwt" }));
    await f(url, json({ model: "gpt-fake", training_file: "file-1" })); // a model, no conversation
    await f(url, json([1, 2]));
    expect(provider.requests.map((q) => q.method)).toEqual([
      "GET",
      "POST",
      "POST",
      "POST",
      "POST",
      "POST",
    ]);
    expect(r.stats).toMatchObject({ hits: 0, misses: 0, recorded: 0 });
  });

  it("maps the body to the identity: model, normalized conversation as prompt, the rest and the path as params", async () => {
    const r = recorder("auto");
    const f = createFetch({ recorder: r });
    await withInvocation({ role: "planner", task: "plan", projectPath: "/work/run-7" }, () =>
      f(
        `${provider.url}/v1/chat/completions?api-version=2025-01-01&api_key=sk-in-query`,
        json(
          chat({
            messages: [{ role: "user", content: "Read /work/run-7/src/a.ts\n\n  now" }],
            temperature: 0.2,
            user: "end-user-42",
            metadata: { trace: "t-1" },
            store: true,
          }),
          { "x-stainless-retry-count": "3" },
        ),
      ),
    );
    const m = r.last?.manifest;
    expect(m).toMatchObject({ role: "planner", task: "plan", model: "gpt-fake", attempt: 0 });
    expect(modelOf(m).prompt).toBe(
      '{"messages":[{"content":"Read {project}/src/a.ts now","role":"user"}]}',
    );
    expect(modelOf(m).params).toEqual({
      ":host": provider.url,
      ":path": "/v1/chat/completions",
      ":query": { "api-version": "2025-01-01" },
      temperature: 0.2,
    });
    expect(VOLATILE_BODY_FIELDS).toEqual(expect.arrayContaining(["user", "metadata", "store"]));
  });

  it("replays the same call made through an aliased host, other headers and other volatile fields", async () => {
    const store = recorder("auto").store;
    const hostAliases = { [new URL(provider.url).host]: "fake", "gateway.invalid:9": "fake" };
    const live = await createFetch({ recorder: recorder("auto", store), hostAliases })(
      `${provider.url}/v1/chat/completions`,
      json(chat({ user: "a" })),
    );
    const body = await live.json();
    const replay = createFetch({ recorder: recorder("replay", store), hostAliases });
    const again = await replay(
      "http://gateway.invalid:9/v1/chat/completions",
      json(chat({ user: "b" }), { authorization: "Bearer other", "x-request-id": "mine" }),
    );
    expect(await again.json()).toEqual(body);
    expect(provider.calls).toBe(1);
  });

  it("replays an SSE stream byte for byte, one event per chunk, with a real streaming Response", async () => {
    const store = recorder("auto").store;
    const req = json(chat({ stream: true }));
    const live = await createFetch({ recorder: recorder("auto", store) })(
      `${provider.url}/v1/chat/completions`,
      req,
    );
    const liveText = (await chunks(live)).join("");
    const again = await createFetch({ recorder: recorder("replay", store) })(
      `${provider.url}/v1/chat/completions`,
      req,
    );
    expect(again.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(again.body).toBeInstanceOf(ReadableStream);
    const replayed = await chunks(again);
    expect(replayed.join("")).toBe(liveText);
    expect(replayed).toHaveLength(liveText.split("\n\n").length - 1);
    expect(replayed.at(-1)).toBe("data: [DONE]\n\n");
  });

  it("accepts a Request as input, and bodies as bytes", async () => {
    const r = recorder("auto");
    const f = createFetch({ recorder: r });
    const url = `${provider.url}/v1/chat/completions`;
    const a = await f(new Request(url, json(chat())));
    const init = json(chat());
    const b = await f(url, { ...init, body: new TextEncoder().encode(init.body as string) });
    expect(await b.json()).toEqual(await a.json());
    expect(provider.calls).toBe(1);
    expect(provider.requests[0]?.body).toEqual(chat());
  });

  it("hands a non-2xx answer to a streaming request over live, untouched, and stores nothing", async () => {
    const r = recorder("auto");
    const f = createFetch({ recorder: r });
    provider.fail("rate-limit");
    const res = await f(`${provider.url}/v1/chat/completions`, json(chat({ stream: true })));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after-ms")).toBe("5");
    expect(await res.json()).toMatchObject({ error: { type: "rate_limit_exceeded" } });
    expect(r.stats.recorded).toBe(0);
  });

  it('throws the ReplayMissError from fetch in replay mode with onMiss: "throw"', async () => {
    const f = createFetch({ recorder: recorder("replay"), onMiss: "throw" });
    await expect(f(`${provider.url}/v1/chat/completions`, json(chat()))).rejects.toBeInstanceOf(
      ReplayMissError,
    );
    expect(provider.calls).toBe(0);
  });

  it("honours custom volatile fields, shouldRecord and isComplete", async () => {
    const r = recorder("auto");
    const f = createFetch({
      recorder: r,
      volatileFields: ["temperature"],
      shouldRecord: (url) => !url.pathname.endsWith("/responses"),
      isComplete: (res) => JSON.stringify(res.body).includes("#1"),
    });
    const url = `${provider.url}/v1/chat/completions`;
    await f(url, json(chat({ temperature: 0 })));
    await f(url, json(chat({ temperature: 1 }))); // same identity: a hit
    expect(r.last?.hit).toBe(true);
    await f(url, json(chat({ n: 2 }))); // "#2": refused by isComplete
    await f(url, json(chat({ n: 2 })));
    await f(`${provider.url}/v1/responses`, json({ model: "m", input: "x" }));
    expect(provider.calls).toBe(4);
    expect(r.stats.recorded).toBe(1);
  });

  it("checks its arguments", () => {
    expect(() => createFetch({} as never)).toThrow(TypeError);
    expect(() => createFetch({ recorder: recorder("auto"), fetch: 1 as never })).toThrow(
      /options.fetch/,
    );
  });
});
