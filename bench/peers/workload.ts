/**
 * The peers workload: N distinct chat-completion calls with ~4 KiB prompts,
 * every tenth one streamed, made through the real `openai` SDK one after the
 * other (an agent pipeline's shape). Deterministic: call i is the same
 * request on every run and for every tool.
 *
 * An answer is reduced to one string (the parsed completion, or every parsed
 * chunk of a stream, as JSON), so "the replayed answer equals the recorded
 * one" is a string comparison the parent can also do across processes.
 */
import OpenAI from "openai";
import { buildPrompt } from "../support/prompt.js";

/** UTF-8 size of the user prompt of every call. */
export const PROMPT_BYTES = 4 * 1024;
export const MODEL = "gpt-bench";
export const TEMPERATURE = 0.2;
/** The temperature of the miss probe: the same request as call {@link PROBE_CALL} otherwise. */
export const MISS_TEMPERATURE = 0.7;
/** The call the miss and repeat probes reuse (a plain, non-streamed one). */
export const PROBE_CALL = 1;

const SYSTEM =
  "You are the builder step of a coding agent. Apply the requested change, keep the public API stable and answer with a short summary.";

export type ChatRequest = OpenAI.Chat.ChatCompletionCreateParams;

/** Whether call `i` streams: every tenth call, i.e. 10 % of the workload. */
export function isStreamed(i: number): boolean {
  return i % 10 === 9;
}

/** Call `i` of the workload. */
export function request(i: number, temperature = TEMPERATURE): ChatRequest {
  // The index up front makes every prompt distinct even after normalization
  // (which templates the paths, UUIDs and timestamps the prompt carries).
  const head = `Request ${i}: `;
  const prompt = head + buildPrompt(PROMPT_BYTES - head.length, i + 1);
  return {
    model: MODEL,
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: prompt },
    ],
    temperature,
    max_tokens: 256,
    ...(isStreamed(i) ? { stream: true } : {}),
  };
}

/** An SDK client on `baseUrl` (`…/v1`) through `fetch`, never retrying (a replay miss must surface at once). */
export function client(baseUrl: string, fetch?: typeof globalThis.fetch): OpenAI {
  return new OpenAI({
    apiKey: "sk-bench-not-a-secret",
    baseURL: baseUrl,
    maxRetries: 0,
    ...(fetch === undefined ? {} : { fetch }),
  });
}

/** Make one call and reduce its answer to a comparable string (every chunk, for a stream). */
export async function call(openai: OpenAI, body: ChatRequest): Promise<string> {
  if (body.stream === true) {
    const stream = await openai.chat.completions.create(body);
    const chunks: unknown[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    if (chunks.length === 0) throw new Error("empty stream");
    return JSON.stringify(chunks);
  }
  const completion = await openai.chat.completions.create(
    body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  );
  return JSON.stringify(completion);
}

/** Every message in an error's `cause` chain, outermost first (SDKs wrap what fetch throws). */
export function errorChain(error: unknown): string[] {
  const out: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof Error) {
      out.push(`${e.name}: ${e.message}`);
      e = e.cause;
    } else {
      out.push(String(e));
      break;
    }
  }
  return out;
}
