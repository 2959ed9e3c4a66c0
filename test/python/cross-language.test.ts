/**
 * One store, two languages: a recording made by Node through `createFetch`
 * replays for the Python `openai` client through `invocache proxy`, and a
 * recording made by the Python client through the proxy replays for Node's
 * `createFetch`. The proxy hands each call to `createFetch`, so the
 * identities are the same; the fake provider counts calls, so a replay that
 * went upstream would show.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createFetch } from "../../src/adapters/index.js";
import { createRecorder } from "../../src/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { tempDir } from "../helpers/tmp.js";
import { type ProxyChild, python, SKIP, SKIP_REASON, startProxy } from "./python-env.js";

const KEY = `sk-cross-${Math.random().toString(36).slice(2)}-do-not-store`;
const MODEL = "gpt-fake";

/**
 * Python's `openai` client on `baseUrl`: one chat completion and one streamed, printed as JSON.
 * Asynchronous: the fake provider answers from this process's event loop.
 */
async function pythonCalls(
  baseUrl: string,
  prompt: string,
): Promise<{ text: string; chunks: string[] }> {
  const script = `
import json, sys, openai
client = openai.OpenAI(base_url=sys.argv[1], api_key=sys.argv[2], max_retries=0, timeout=30)
messages = [{"role": "user", "content": sys.argv[3]}]
out = client.chat.completions.create(model=${JSON.stringify(MODEL)}, messages=messages)
chunks = [c.choices[0].delta.content for c in client.chat.completions.create(
    model=${JSON.stringify(MODEL)}, messages=messages, stream=True)
    if c.choices and c.choices[0].delta.content]
print(json.dumps({"text": out.choices[0].message.content, "chunks": chunks}))`;
  const { stdout, stderr, code } = await new Promise<{
    stdout: string;
    stderr: string;
    code: number | null;
  }>((done) => {
    const child = spawn(python(), ["-c", script, baseUrl, KEY, prompt]);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
    });
    child.on("close", (code) => done({ stdout, stderr, code }));
  });
  if (code !== 0) throw new Error(`python failed (${code}):\n${stdout}\n${stderr}`);
  return JSON.parse(stdout) as { text: string; chunks: string[] };
}

/** Node's `openai` client through createFetch on `store`: the same two calls. */
async function nodeCalls(
  store: string,
  mode: "auto" | "replay",
  provider: FakeProvider,
  prompt: string,
): Promise<{ text: string; chunks: string[] }> {
  const recorder = createRecorder({ store, mode, env: {} });
  try {
    const client = new OpenAI({
      apiKey: KEY,
      baseURL: `${provider.url}/v1`,
      fetch: createFetch({ recorder }),
      maxRetries: 0,
    });
    const messages = [{ role: "user" as const, content: prompt }];
    const out = await client.chat.completions.create({ model: MODEL, messages });
    const chunks: string[] = [];
    for await (const c of await client.chat.completions.create({
      model: MODEL,
      messages,
      stream: true,
    })) {
      const text = c.choices[0]?.delta.content;
      if (text) chunks.push(text);
    }
    return { text: out.choices[0]?.message.content ?? "", chunks };
  } finally {
    await recorder.close();
  }
}

describe("Node and Python share recordings through the proxy", () => {
  let provider: FakeProvider | undefined;
  let proxy: ProxyChild | undefined;
  afterEach(async () => {
    await proxy?.stop();
    await provider?.close();
    proxy = undefined;
    provider = undefined;
  });

  it.skipIf(SKIP)(
    `a createFetch recording replays for the Python openai client, and the other way round${SKIP_REASON}`,
    async () => {
      python();
      const store = `sqlite://${join(tempDir("cross-language"), "cache.sqlite")}`;
      provider = await startFakeProvider();

      // Node records (auto), then Python replays it through the proxy.
      const fromNode = await nodeCalls(store, "auto", provider, "from node");
      expect(provider.calls).toBe(2);
      expect(fromNode.chunks.length).toBeGreaterThan(1);
      proxy = await startProxy([
        "--store",
        store,
        "--mode",
        "replay",
        "--upstream",
        `openai=${provider.url}`,
      ]);
      const replayedByPython = await pythonCalls(`${proxy.url}/openai/v1`, "from node");
      expect(replayedByPython).toEqual(fromNode);
      expect(provider.calls).toBe(2);
      await proxy.stop();

      // Python records through the proxy (auto), then Node replays it.
      proxy = await startProxy([
        "--store",
        store,
        "--mode",
        "auto",
        "--upstream",
        `openai=${provider.url}`,
      ]);
      const fromPython = await pythonCalls(`${proxy.url}/openai/v1`, "from python");
      expect(provider.calls).toBe(4);
      expect(fromPython.text).toContain("from python");
      expect(proxy.output()).not.toContain(KEY);
      await proxy.stop();
      proxy = undefined;
      const replayedByNode = await nodeCalls(store, "replay", provider, "from python");
      expect(replayedByNode).toEqual(fromPython);
      expect(provider.calls).toBe(4);
    },
    120_000,
  );
});
