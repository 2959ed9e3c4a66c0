/**
 * The agent-loop bench's workload, one source for the bench
 * (bench/agent-loop.bench.ts) and the scripts that take it apart
 * (agent-loop-profile.ts, agent-loop-ab.ts):
 * turn t sends a system prompt, t user messages (~2 KiB) and the t − 1
 * answers (~2 KiB) through the real `openai` SDK; `constant` answers each
 * turn's recorded bytes at once (the recording upstream) and `floor` does
 * the same after reading the request body once (the SDK floor, see
 * {@link readingBody}).
 */
import { join } from "node:path";
import OpenAI from "openai";
import { cassetteStore, openStore, type Store } from "../../src/index.js";
import { buildPrompt } from "./prompt.js";

export const MODEL = "gpt-bench";
export const BASE_URL = "http://127.0.0.1:9/v1";
export const SYSTEM =
  "You are the builder step of a coding agent. Apply the requested change and answer with a short summary.";
/** The recorder's identity options: explicit roots, so every machine computes the same. */
export const MACHINE = { homeDir: "/home/dev", tmpDirs: ["/tmp"] };

/** Each message's size: ~2 KiB. */
const MESSAGE_BYTES = 2 * 1024;
export const user = (k: number) => `Turn ${k}: ${buildPrompt(MESSAGE_BYTES, 1000 + k)}`;
export const assistant = (k: number) => `Answer ${k}: ${buildPrompt(MESSAGE_BYTES, 5000 + k)}`;

/** Turn t's answer, as the upstream sends it. */
export function completion(t: number): string {
  return JSON.stringify({
    id: `chatcmpl-${t}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: MODEL,
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: assistant(t) },
      },
    ],
    usage: { prompt_tokens: 100 * t, completion_tokens: 500, total_tokens: 100 * t + 500 },
  });
}

/**
 * The floor's fetch: reads the request body once (one native search, about
 * the cheapest read there is), then answers as `answer` does. Every
 * transport reads the body to send it, and the SDK's body is
 * `JSON.stringify`'s result, which V8 returns as a rope (a tree of the
 * pieces it wrote): whoever reads it first pays to join it into one flat
 * string, a fresh allocation the size of the body (two bytes a character
 * here). A floor that never looked at the body left that part of building
 * it to the replay, which must read it (docs/performance.md, "The SDK
 * floor reads its request"). The peers floor (bench/peers/child.ts) reads
 * its body too, to choose its answer.
 */
export function readingBody(answer: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const body = init?.body;
    if (typeof body !== "string" || body.indexOf("\u0000") !== -1)
      throw new Error("bench: the floor expects the SDK's JSON body, as a string without NUL");
    return answer(input, init);
  };
}

/** The loop of `turns` turns and the fetch that answers it (the turn it answers is the last one `run` started). */
export function agentLoop(turns: number): {
  constant: typeof fetch;
  floor: typeof fetch;
  client: (f: typeof fetch) => OpenAI;
  run: (openai: OpenAI, check: boolean) => Promise<void>;
} {
  const answers = Array.from({ length: turns + 1 }, (_, t) => (t === 0 ? "" : completion(t)));
  let turn = 0;
  const constant: typeof fetch = async () =>
    new Response(answers[turn]!, { status: 200, headers: { "content-type": "application/json" } });
  const client = (f: typeof fetch) =>
    new OpenAI({ apiKey: "sk-bench-not-a-secret", baseURL: BASE_URL, maxRetries: 0, fetch: f });
  const run = async (openai: OpenAI, check: boolean) => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "system", content: SYSTEM },
    ];
    for (let t = 1; t <= turns; t++) {
      turn = t;
      messages.push({ role: "user", content: user(t) });
      const c = await openai.chat.completions.create({ model: MODEL, messages, temperature: 0 });
      const content = c.choices[0]?.message.content ?? "";
      if (check && content !== assistant(t)) throw new Error(`turn ${t} answered wrong`);
      messages.push({ role: "assistant", content });
    }
  };
  return { constant, floor: readingBody(constant), client, run };
}

/** The stores the loop scripts replay from, by `--store` name. */
export const LOOP_STORES = ["memory", "sqlite", "cassette"] as const;

/**
 * Opens the loop's store of `kind` under `dir`, as the bench opens it: the
 * memory store is one store for the process (opened again, the same one,
 * so what was recorded is there to replay); SQLite and the cassette are
 * files there, opened anew each time.
 */
export function loopStoreOpener(kind: string, dir: string): () => Store {
  let memory: Store | undefined;
  return () => {
    if (kind === "memory") {
      memory ??= openStore("memory://");
      return memory;
    }
    if (kind === "sqlite") return openStore(`sqlite://${join(dir, "loop.sqlite")}`);
    return cassetteStore(join(dir, "loop.yaml"), {
      write: "on-close",
      parseCache: join(dir, "parse-cache"),
    });
  };
}
