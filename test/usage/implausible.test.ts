/**
 * A bad usage block never loses a paid answer (issue 29 §7): usage is
 * metadata. Through createFetch against a real HTTP server on 127.0.0.1
 * whose JSON says `1e400` (parsed as Infinity) or `1e300` tokens: the answer
 * reaches the caller, is recorded and replays; the implausible usage is
 * dropped with a warning event; stats stay sane.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFetch, createRecorder, type RecorderEvents } from "../../src/index.js";
import { readUsage, USAGE_TOKEN_LIMIT } from "../../src/usage/index.js";

/** The raw JSON text the server answers: numbers spelled as given, never through JSON.stringify. */
const body = (prompt: string, completion: string) =>
  `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini",` +
  `"choices":[{"index":0,"message":{"role":"assistant","content":"the answer"},"finish_reason":"stop"}],` +
  `"usage":{"prompt_tokens":${prompt},"completion_tokens":${completion},"total_tokens":${prompt}}}`;

let server: Server;
let url: string;
let answer: string;
let calls = 0;

beforeEach(async () => {
  calls = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (content: string): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
});

describe("implausible usage through createFetch", () => {
  it.each([
    ["1e400", "5"],
    ["1e300", "5"],
    ["12", "1e300"],
  ])(
    "prompt_tokens %s, completion_tokens %s: answered, recorded, replayed; usage dropped with a warning",
    async (prompt, completion) => {
      answer = body(prompt, completion);
      const store = createRecorder({
        store: "memory://",
        mode: "auto",
        env: {},
        telemetry: false,
      }).store;
      const recorder = createRecorder({ store, mode: "auto", env: {}, telemetry: false });
      const warnings: RecorderEvents["warning"][] = [];
      recorder.on("warning", (w) => warnings.push(w));
      const res = await createFetch({ recorder })(url, post("hi"));
      expect(res.status).toBe(200);
      const json = (await res.json()) as { choices: { message: { content: string } }[] };
      expect(json.choices[0]?.message.content).toBe("the answer");
      expect(recorder.stats.recorded).toBe(1);
      expect(warnings.some((w) => /usage/.test(w.message))).toBe(true);
      const s = recorder.stats;
      expect(Number.isFinite(s.spent.usd)).toBe(true);
      expect(s.spent.usd).toBe(0);
      expect(s.spent.inputTokens).toBe(0);
      expect(s.spent.noUsage).toBe(1);

      const replayer = createRecorder({ store, mode: "replay", env: {}, telemetry: false });
      const again = await createFetch({ recorder: replayer })(url, post("hi"));
      expect(again.status).toBe(200);
      expect(
        ((await again.json()) as { choices: { message: { content: string } }[] }).choices[0]
          ?.message.content,
      ).toBe("the answer");
      expect(calls).toBe(1);
      expect(replayer.stats.hits).toBe(1);
      expect(Number.isFinite(replayer.stats.saved.usd)).toBe(true);
      expect(replayer.stats.saved.inputTokens).toBe(0);
    },
  );

  it("a plausible usage block is kept: sums stay exact", async () => {
    answer = body("1000", "200");
    const recorder = createRecorder({
      store: "memory://",
      mode: "auto",
      env: {},
      telemetry: false,
    });
    const warnings: RecorderEvents["warning"][] = [];
    recorder.on("warning", (w) => warnings.push(w));
    await (await createFetch({ recorder })(url, post("hi"))).json();
    expect(recorder.stats.spent).toMatchObject({
      inputTokens: 1000,
      outputTokens: 200,
      noUsage: 0,
    });
    expect(warnings).toStrictEqual([]);
  });
});

describe("readUsage", () => {
  const chat = (usage: Record<string, unknown>) => ({ object: "chat.completion", usage });
  it.each([
    [Number.POSITIVE_INFINITY, "Infinity"],
    [1e300, "1e+300"],
    [-1, "-1"],
    [12.5, "12.5"],
    [USAGE_TOKEN_LIMIT + 1, String(USAGE_TOKEN_LIMIT + 1)],
  ])("a token count of %s is implausible: no usage, and the problem says why", (n, shown) => {
    const r = readUsage(chat({ prompt_tokens: n, completion_tokens: 1 }));
    expect(r.usage).toBeUndefined();
    expect(r.implausible).toContain(shown);
  });

  it("an implausible optional count (cached tokens) drops the whole block: nothing partial", () => {
    const r = readUsage(
      chat({
        prompt_tokens: 10,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 1e300 },
      }),
    );
    expect(r.usage).toBeUndefined();
    expect(r.implausible).toContain("1e+300");
  });

  it("the bound itself is plausible; absent and null counts are no problem", () => {
    expect(
      readUsage(chat({ prompt_tokens: USAGE_TOKEN_LIMIT, completion_tokens: 0 })),
    ).toStrictEqual({
      usage: { shape: "openai.chat", inputTokens: USAGE_TOKEN_LIMIT, outputTokens: 0 },
    });
    expect(
      readUsage(chat({ prompt_tokens: 3, completion_tokens: 1, prompt_tokens_details: null })),
    ).toStrictEqual({ usage: { shape: "openai.chat", inputTokens: 3, outputTokens: 1 } });
  });
});
