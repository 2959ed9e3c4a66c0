/**
 * What a replayed Response carries, compared with what the recording holds
 * as the adapter has always turned it into a Response: the status, the kept
 * headers read through `Headers` with the default content type added only
 * when none is recorded (in any letter case), and the body byte for byte.
 * Hand-edited recordings (no content type, capitalized names, header pairs)
 * included, and streams.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch } from "../../src/adapters/index.js";
import { createRecorder, type Recorder } from "../../src/index.js";
import { entryPrefix } from "../../src/store/index.js";

let recorders: Recorder[];
beforeEach(() => {
  recorders = [];
});
afterEach(async () => {
  for (const r of recorders) await r.close();
});

const URL_ = "http://127.0.0.1:9/v1/chat/completions";

function recorder(mode: "auto" | "replay", store?: Recorder["store"]): Recorder {
  const r = createRecorder({ store: store ?? "memory://", mode, env: {} });
  recorders.push(r);
  return r;
}

/** A request as the openai SDK sends it: a Headers object and its own signal. */
const sdkInit = (body: unknown): RequestInit => ({
  method: "POST",
  headers: new Headers({ "content-type": "application/json", authorization: "Bearer sk-x" }),
  body: JSON.stringify(body),
  signal: new AbortController().signal,
});

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "gpt-fake",
  messages: [{ role: "user", content: "hello" }],
  ...extra,
});

/** As `JSON.stringify` spells it: a JSON body is replayed from its parsed form. */
const ANSWER_TEXT =
  '{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hé \\"ok\\""}}]}';
const UPSTREAM_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "x-request-id": "req_42",
  "x-ratelimit-remaining-requests": "99",
  "openai-version": "2020-10-01",
  "set-cookie": "session=secret",
};
// Comments, CRLF, a field without a space, an id and a retry: kept through `raw`.
const SSE_TEXT = [
  'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}\n\n',
  ': keep-alive\r\ndata:{"id":"c","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}\r\n\r\n',
  'id: 7\nretry: 10\ndata: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  "data: [DONE]\n\n",
];

const upstream = async (_input: unknown, init?: RequestInit): Promise<Response> => {
  const streamed = String(init?.body).includes('"stream":true');
  if (!streamed) return new Response(ANSWER_TEXT, { headers: UPSTREAM_HEADERS });
  const encoder = new TextEncoder();
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (i < SSE_TEXT.length) c.enqueue(encoder.encode(SSE_TEXT[i++]));
        else c.close();
      },
    }),
    { headers: { ...UPSTREAM_HEADERS, "content-type": "text/event-stream" } },
  );
};

/** The headers a recording's head gave a replayed Response before any fast path. */
function referenceHeaders(recorded: unknown, type: string): [string, string][] {
  const h = new Headers(recorded as Record<string, string>);
  if (!h.has("content-type")) h.set("content-type", type);
  return [...h];
}

/** Record one call, then edit its stored head with `edit`. Returns the store and the stored head. */
async function recordAndEdit(
  body: unknown,
  edit: (head: Record<string, unknown>) => void = () => {},
): Promise<{ store: Recorder["store"]; head: Record<string, unknown> }> {
  const r = recorder("auto");
  const res = await createFetch({ recorder: r, fetch: upstream })(URL_, sdkInit(body));
  await res.arrayBuffer();
  const entries: [string, Record<string, unknown>][] = [];
  for await (const [key, value] of r.store.list(entryPrefix(r.namespace))) {
    entries.push([key, value as Record<string, unknown>]);
  }
  expect(entries).toHaveLength(1);
  const [key, entry] = entries[0]!;
  const response = entry.response as Record<string, unknown>;
  const head = (response.kind === "stream" ? response.head : response) as Record<string, unknown>;
  edit(head);
  await r.store.set(key, entry as never);
  return { store: r.store, head };
}

const headersOf = (head: Record<string, unknown>) => head.headers as Record<string, unknown>;

async function replay(store: Recorder["store"], body: unknown): Promise<Response> {
  const f = createFetch({
    recorder: recorder("replay", store),
    fetch: async () => {
      throw new Error("replay went upstream");
    },
  });
  return f(URL_, sdkInit(body));
}

async function chunkTexts(res: Response): Promise<string[]> {
  const out: string[] = [];
  const decoder = new TextDecoder();
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
    out.push(decoder.decode(c));
  }
  return out;
}

describe("createFetch replayed Response", () => {
  it("a JSON answer: status, the kept headers and the body bytes as recorded", async () => {
    const { store, head } = await recordAndEdit(chat());
    const res = await replay(store, chat());
    expect(res.status).toBe(200);
    expect([...res.headers]).toEqual(referenceHeaders(head.headers, "application/json"));
    expect([...res.headers]).toEqual([
      ["content-type", "application/json; charset=utf-8"],
      ["openai-version", "2020-10-01"],
      ["x-ratelimit-remaining-requests", "99"],
      ["x-request-id", "req_42"],
    ]);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new TextEncoder().encode(ANSWER_TEXT));
  });

  it.each([
    ["no content type", (h: Record<string, unknown>) => void delete headersOf(h)["content-type"]],
    [
      "a capitalized Content-Type",
      (h: Record<string, unknown>) => {
        delete headersOf(h)["content-type"];
        headersOf(h)["Content-Type"] = "application/vnd.x+json";
      },
    ],
    [
      "header pairs",
      (h: Record<string, unknown>) => {
        h.headers = [
          ["X-Request-Id", "req_7"],
          ["x-ratelimit-limit-requests", "5"],
        ];
      },
    ],
    [
      "header pairs with a content type",
      (h: Record<string, unknown>) => {
        h.headers = [["Content-Type", "application/json"]];
      },
    ],
  ])("a hand-edited recording with %s: headers as Headers reads them", async (_name, change) => {
    const { store, head } = await recordAndEdit(chat(), change);
    const res = await replay(store, chat());
    expect([...res.headers]).toEqual(referenceHeaders(head.headers, "application/json"));
    expect(res.headers.get("content-type")).not.toContain(",");
    expect(await res.text()).toBe(ANSWER_TEXT);
  });

  it("a hand-edited status text is kept", async () => {
    const { store } = await recordAndEdit(chat(), (h) => {
      h.statusText = "Fine";
    });
    const res = await replay(store, chat());
    expect(res.statusText).toBe("Fine");
  });

  it("a stream: the bytes the server sent, one chunk per event, the kept headers", async () => {
    const { store, head } = await recordAndEdit(chat({ stream: true }));
    const res = await replay(store, chat({ stream: true }));
    expect([...res.headers]).toEqual(referenceHeaders(head.headers, "text/event-stream"));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(await chunkTexts(res)).toEqual(SSE_TEXT);
  });

  it("a stream recorded without a content type gets the default one", async () => {
    const { store, head } = await recordAndEdit(
      chat({ stream: true }),
      (h) => void delete headersOf(h)["content-type"],
    );
    const res = await replay(store, chat({ stream: true }));
    expect([...res.headers]).toEqual(referenceHeaders(head.headers, "text/event-stream"));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect((await chunkTexts(res)).join("")).toBe(SSE_TEXT.join(""));
  });
});
