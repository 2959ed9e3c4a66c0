/**
 * Is a model API response a complete answer, fit to be replayed forever?
 * A truncated answer (the token limit was hit), an in-band error, or a
 * stream that stopped before its protocol's final event is not: it is
 * returned to the caller and never stored.
 */
import type { JsonValue } from "../json/index.js";
import type { SseEvent } from "./sse.js";

type Obj = { [key: string]: JsonValue };

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Stop reasons that mean "cut off by a limit", per vendor. */
const TRUNCATED_STOP = new Set([
  "length", // OpenAI chat/completions finish_reason
  "max_tokens", // Anthropic stop_reason
  "model_context_window_exceeded", // Anthropic stop_reason
  "MAX_TOKENS", // Gemini finishReason
]);

function truncatedChoices(v: Obj): boolean {
  for (const key of ["choices", "candidates"] as const) {
    const list = v[key];
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (!isObj(c)) continue;
      const reason = c.finish_reason ?? c.finishReason;
      if (typeof reason === "string" && TRUNCATED_STOP.has(reason)) return true;
    }
  }
  return false;
}

/**
 * A non-streamed JSON body: complete unless it carries an `error`, a
 * truncated choice (`finish_reason: "length"`, Gemini `MAX_TOKENS`), an
 * Anthropic `stop_reason: "max_tokens"`, or is a Responses API object whose
 * `status` is not `"completed"` (`incomplete`, `failed`, `queued`…).
 *
 * @example
 * isCompleteJsonBody({ choices: [{ finish_reason: "length" }] }) // false
 */
export function isCompleteJsonBody(body: JsonValue): boolean {
  if (!isObj(body)) return true;
  if (body.error != null) return false;
  if (body.type === "error") return false;
  if (truncatedChoices(body)) return false;
  if (typeof body.stop_reason === "string" && TRUNCATED_STOP.has(body.stop_reason)) return false;
  if (body.object === "response" && typeof body.status === "string") {
    return body.status === "completed";
  }
  return true;
}

/**
 * A recorded SSE stream: complete unless an event is an error or a
 * truncation marker, and, for the protocols we recognize, only if their
 * final event arrived (chat completions: `[DONE]` or a finish reason;
 * Anthropic: `message_stop`; Responses API: `response.completed`).
 *
 * @example
 * isCompleteSse([{ json: { type: "message_start" } }]) // false: no message_stop
 */
export function isCompleteSse(events: readonly SseEvent[]): boolean {
  let chat = false;
  let chatDone = false;
  let anthropic = false;
  let anthropicDone = false;
  let responses = false;
  let responsesDone = false;
  for (const e of events) {
    if (e.event === "error") return false;
    if (e.data === "[DONE]") chatDone = true;
    const v = e.json;
    if (!isObj(v)) continue;
    if (v.error != null || v.type === "error") return false;
    if (truncatedChoices(v)) return false;
    const type = typeof v.type === "string" ? v.type : "";
    if (v.object === "chat.completion.chunk" || v.object === "text_completion") {
      chat = true;
      const choices = v.choices;
      if (Array.isArray(choices) && choices.some((c) => isObj(c) && c.finish_reason != null)) {
        chatDone = true;
      }
    }
    if (type === "message_start") anthropic = true;
    if (type === "message_stop") anthropicDone = true;
    if (type === "message_delta" && isObj(v.delta)) {
      const reason = v.delta.stop_reason;
      if (typeof reason === "string" && TRUNCATED_STOP.has(reason)) return false;
    }
    if (type.startsWith("response.")) {
      responses = true;
      if (type === "response.completed") responsesDone = true;
      if (type === "response.incomplete" || type === "response.failed") return false;
      if (isObj(v.response) && v.response.status === "incomplete") return false;
    }
  }
  if (chat && !chatDone) return false;
  if (anthropic && !anthropicDone) return false;
  if (responses && !responsesDone) return false;
  return true;
}
