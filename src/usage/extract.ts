/**
 * Token usage read from a response, as the provider reported it. A pure
 * translation of known response shapes: OpenAI chat completions and
 * Responses (plain, or streamed with the final usage chunk), Anthropic
 * messages (plain, or streamed: `message_start` then `message_delta`),
 * Gemini `usageMetadata`, and the AI SDK's v3 `usage`. Each may come bare
 * (what `recorder.call` stored), inside the fetch adapter's recording
 * (`{ status, headers, body }`, SSE events) or inside a recorded stream.
 *
 * A shape that is not recognised gives `undefined`: no usage is recorded,
 * never a guess (no counting of characters).
 */

// The stored form of usage (`meta.usage`) is part of the entry format: the
// store's envelope owns it (src/store/usage-format.ts); this file reads it
// out of responses.
import type { Usage, UsageShape } from "../store/index.js";

export { type Usage, type UsageShape, usageProblem } from "../store/index.js";

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

/**
 * The largest token count read as plausible: 10^9 tokens in one call is
 * three orders of magnitude past the largest context windows (~10^6) and
 * far below where a sum of them loses integer precision (2^53). A count
 * above it is a provider's bug or a hostile answer (`1e300`, which would
 * make stats say $6e293), never a real call.
 */
export const USAGE_TOKEN_LIMIT = 1_000_000_000;

/** Where {@link count} reports an implausible count while {@link readUsage} reads (synchronous, so one slot). */
let implausible: string[] | undefined;

/**
 * A token count: an integer from 0 to {@link USAGE_TOKEN_LIMIT}, else
 * undefined. An absent count (undefined, null) is just absent; any other
 * value that is not a plausible count (non-finite, negative, fractional,
 * too large, a string such as the `"Infinity"` a `1e400` is read as) is
 * reported to {@link readUsage}, which then drops the whole block.
 */
function count(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= USAGE_TOKEN_LIMIT) return v;
  if (v !== undefined && v !== null && implausible !== undefined) {
    implausible.push(typeof v === "number" ? String(v) : (JSON.stringify(v) ?? String(v)));
  }
  return undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function build(
  shape: UsageShape,
  input: number,
  output: number,
  extra: {
    cacheRead?: number | undefined;
    cacheWrite?: number | undefined;
    reasoning?: number | undefined;
    model?: string | undefined;
  },
): Usage {
  return {
    shape,
    inputTokens: input,
    outputTokens: output,
    ...(extra.cacheRead ? { cacheReadTokens: extra.cacheRead } : {}),
    ...(extra.cacheWrite ? { cacheWriteTokens: extra.cacheWrite } : {}),
    ...(extra.reasoning ? { reasoningTokens: extra.reasoning } : {}),
    ...(extra.model === undefined ? {} : { model: extra.model }),
  };
}

/** OpenAI chat completions `usage` (also the final chunk of a stream with `include_usage`). */
function openAiChat(u: Obj, model: string | undefined): Usage | undefined {
  const input = count(u.prompt_tokens);
  const output = count(u.completion_tokens);
  if (input === undefined || output === undefined) return undefined;
  return build("openai.chat", input, output, {
    cacheRead: count(obj(u.prompt_tokens_details)?.cached_tokens),
    reasoning: count(obj(u.completion_tokens_details)?.reasoning_tokens),
    model,
  });
}

/** OpenAI Responses `usage`. */
function openAiResponses(u: Obj, model: string | undefined): Usage | undefined {
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || output === undefined || !("total_tokens" in u)) return undefined;
  return build("openai.responses", input, output, {
    cacheRead: count(obj(u.input_tokens_details)?.cached_tokens),
    reasoning: count(obj(u.output_tokens_details)?.reasoning_tokens),
    model,
  });
}

/** Anthropic `usage`: `input_tokens` excludes the cache reads and writes, which are added. */
function anthropic(u: Obj, model: string | undefined): Usage | undefined {
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || output === undefined) return undefined;
  const cacheRead = count(u.cache_read_input_tokens) ?? 0;
  const cacheWrite = count(u.cache_creation_input_tokens) ?? 0;
  return build("anthropic.messages", input + cacheRead + cacheWrite, output, {
    cacheRead,
    cacheWrite,
    model,
  });
}

/** Gemini `usageMetadata`: thoughts are billed as output. */
function gemini(u: Obj, model: string | undefined): Usage | undefined {
  const input = count(u.promptTokenCount);
  if (input === undefined) return undefined;
  const candidates = count(u.candidatesTokenCount) ?? 0;
  const thoughts = count(u.thoughtsTokenCount) ?? 0;
  if (count(u.candidatesTokenCount) === undefined && count(u.totalTokenCount) === undefined)
    return undefined;
  return build("gemini.generateContent", input, candidates + thoughts, {
    cacheRead: count(u.cachedContentTokenCount),
    reasoning: thoughts,
    model,
  });
}

/** AI SDK v3 `usage` (`{ inputTokens: { total, cacheRead… }, outputTokens: { total, reasoning… } }`). */
function aiSdk(u: Obj): Usage | undefined {
  const i = obj(u.inputTokens);
  const o = obj(u.outputTokens);
  if (i === undefined || o === undefined) return undefined;
  const input = count(i.total);
  const output = count(o.total);
  if (input === undefined || output === undefined) return undefined;
  return build("ai-sdk", input, output, {
    cacheRead: count(i.cacheRead),
    cacheWrite: count(i.cacheWrite),
    reasoning: count(o.reasoning),
  });
}

/** A plain (non-streamed) response body of any known provider. */
function fromBody(body: Obj): Usage | undefined {
  const model = str(body.model) ?? str(body.modelVersion);
  const usage = obj(body.usage);
  if (usage !== undefined) {
    if (body.object === "chat.completion" || body.object === "chat.completion.chunk")
      return openAiChat(usage, model);
    if (body.object === "response") return openAiResponses(usage, model);
    if (body.type === "message") return anthropic(usage, model);
    return undefined;
  }
  const meta = obj(body.usageMetadata);
  if (meta !== undefined && Array.isArray(body.candidates)) return gemini(meta, model);
  return undefined;
}

/** JSON whitespace, then the brace that opens an object. */
const OPENS_OBJECT = /^[ \t\n\r]*\{/;

/** The JSON payloads of recorded SSE events (fetch adapter: `{ json }` or `{ data }` blocks). */
function ssePayloads(events: readonly unknown[]): Obj[] {
  // A stream whose text cannot hold usage has none to find: not one payload
  // is parsed (a hit of a chat stream recorded without include_usage reads
  // its usage on every replay).
  if (!mayHoldUsage(events)) return [];
  const out: Obj[] = [];
  for (const e of events) {
    const ev = obj(e);
    if (ev === undefined) continue;
    let payload: unknown = ev.json;
    // Only a text that opens an object can parse to one: `[DONE]` and other
    // markers are skipped without a parse and its thrown error.
    if (payload === undefined && typeof ev.data === "string" && OPENS_OBJECT.test(ev.data)) {
      try {
        payload = JSON.parse(ev.data);
      } catch {
        continue; // `[DONE]` and other non-JSON data
      }
    }
    const p = obj(payload);
    if (p !== undefined) out.push(p);
  }
  return out;
}

/**
 * False only when no event can carry usage: every event is a `data` string
 * holding neither "usage" (which every shape's usage key starts with:
 * `usage`, `usageMetadata`) nor "\u" (the one way JSON can spell a letter
 * of that key otherwise). An event given parsed (`json`) or anything else
 * makes it true: only text is ruled out by looking at it.
 */
function mayHoldUsage(events: readonly unknown[]): boolean {
  for (const e of events) {
    const ev = obj(e);
    if (ev === undefined) continue;
    if (ev.json !== undefined || typeof ev.data !== "string") return true;
    if (ev.data.includes("usage") || ev.data.includes("\\u")) return true;
  }
  return false;
}

/** Usage from the payloads of a streamed HTTP answer (OpenAI chat/Responses, Anthropic, Gemini). */
function fromStreamPayloads(payloads: readonly Obj[]): Usage | undefined {
  // Anthropic: input on message_start, cumulative counts on the last message_delta.
  const start = payloads.find((p) => p.type === "message_start");
  if (start !== undefined) {
    const message = obj(start.message);
    const base = obj(message?.usage);
    const deltas = payloads.filter((p) => p.type === "message_delta" && obj(p.usage));
    const last = obj(deltas.at(-1)?.usage);
    if (base === undefined && last === undefined) return undefined;
    // The delta's counts are cumulative, but current API versions send the
    // ones it does not report as null: a null keeps message_start's count.
    const merged: Obj = { ...base };
    for (const [k, v] of Object.entries(last ?? {})) if (v !== null) merged[k] = v;
    return anthropic(merged, str(message?.model));
  }
  // OpenAI Responses: the final response object carries the usage.
  for (let i = payloads.length - 1; i >= 0; i--) {
    const p = payloads[i]!;
    if (typeof p.type === "string" && p.type.startsWith("response.")) {
      const response = obj(p.response);
      if (response?.object === "response" && obj(response.usage) !== undefined)
        return fromBody(response);
    }
  }
  // OpenAI chat: the usage chunk (include_usage); Gemini: the last usageMetadata.
  for (let i = payloads.length - 1; i >= 0; i--) {
    const p = payloads[i]!;
    if (p.object === "chat.completion.chunk" && obj(p.usage) !== undefined) return fromBody(p);
    if (obj(p.usageMetadata) !== undefined && Array.isArray(p.candidates)) return fromBody(p);
  }
  return undefined;
}

/** An AI SDK v3 stream: the `finish` part carries the usage. */
function fromAiSdkParts(parts: readonly unknown[]): Usage | undefined {
  let model: string | undefined;
  for (const part of parts) {
    const p = obj(part);
    if (p?.type === "response-metadata") model = str(p.modelId) ?? model;
    if (p?.type === "finish") {
      const u = obj(p.usage);
      const usage = u === undefined ? undefined : aiSdk(u);
      return usage === undefined ? undefined : model ? { ...usage, model } : usage;
    }
  }
  return undefined;
}

/**
 * The usage a response reports, or `undefined` when its shape is not one
 * this knows (nothing is guessed).
 *
 * @example
 * extractUsage({ object: "chat.completion", model: "gpt-4o", choices: [],
 *   usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })
 * // { shape: "openai.chat", inputTokens: 12, outputTokens: 3, model: "gpt-4o" }
 */
export function extractUsage(response: unknown): Usage | undefined {
  return readUsage(response).usage;
}

/** The usage of a known shape, counts checked one by one (readUsage drops the block if any was implausible). */
function usageOf(response: unknown): Usage | undefined {
  const r = obj(response);
  if (r === undefined) return undefined;
  // A recorded stream (recorder.stream): fetch adapter head + SSE events, or AI SDK parts.
  if (r.kind === "stream" && Array.isArray(r.events)) {
    const data = r.events.map((e) => obj(e)?.data);
    const head = obj(r.head);
    if (head !== undefined && obj(head.body) !== undefined) return fromBody(obj(head.body)!);
    const fromSse = fromStreamPayloads(ssePayloads(data));
    return fromSse ?? fromAiSdkParts(data);
  }
  // The fetch adapter's plain recording: { status, headers, body } or { status, headers, sse }.
  if (typeof r.status === "number" && obj(r.headers) !== undefined) {
    if (obj(r.body) !== undefined) return fromBody(obj(r.body)!);
    if (Array.isArray(r.sse)) return fromStreamPayloads(ssePayloads(r.sse));
    return undefined;
  }
  // The AI SDK middleware's generate recording: { result: { usage, response… } }.
  const result = obj(r.result);
  if (result !== undefined && Object.keys(r).length === 1) {
    const u = obj(result.usage);
    const usage = u === undefined ? undefined : aiSdk(u);
    const model = str(obj(result.response)?.modelId);
    return usage === undefined ? undefined : model ? { ...usage, model } : usage;
  }
  return fromBody(r);
}

/** What {@link readUsage} returns. */
export interface UsageReading {
  /** The usage, when the response reports a plausible one. */
  usage?: Usage;
  /** Why a usage block the response has was dropped (`"a token count of 1e+300 …"`). */
  implausible?: string;
}

/**
 * {@link extractUsage}, saying why when a usage block was there but held an
 * implausible count. Usage is metadata: such a block is dropped whole (no
 * partial sums), the answer itself is kept; the recorder reports the
 * reason as a `warning` event.
 *
 * @example
 * readUsage({ object: "chat.completion", usage: { prompt_tokens: 1e300, completion_tokens: 1 } })
 * // { implausible: "a token count of 1e+300 is not an integer from 0 to 1000000000: usage dropped" }
 */
export function readUsage(response: unknown): UsageReading {
  const found: string[] = [];
  implausible = found;
  let usage: Usage | undefined;
  try {
    usage = usageOf(response);
  } finally {
    implausible = undefined;
  }
  if (found.length > 0) {
    return {
      implausible: `a token count of ${found.slice(0, 3).join(", ")} is not an integer from 0 to ${USAGE_TOKEN_LIMIT}: usage dropped`,
    };
  }
  return usage === undefined ? {} : { usage };
}

/**
 * A stored usage as it may be counted: undefined when a count is above
 * {@link USAGE_TOKEN_LIMIT} (recorded before the bound existed).
 */
export function plausibleUsage(usage: Usage | undefined): Usage | undefined {
  if (usage === undefined) return undefined;
  const over = (n: number | undefined) => n !== undefined && n > USAGE_TOKEN_LIMIT;
  if (over(usage.inputTokens) || over(usage.outputTokens)) return undefined;
  if (over(usage.cacheReadTokens) || over(usage.cacheWriteTokens) || over(usage.reasoningTokens))
    return undefined;
  return usage;
}
