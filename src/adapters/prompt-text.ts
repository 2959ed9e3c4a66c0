/**
 * The prompt of an SDK call as one string, as the identity computes it from
 * `request.conversation` (see `conversationPrompt` in src/identity): the
 * conversation as canonical JSON, every string in it normalized on its own.
 * Adapters pass the conversation itself and never call this; it stays for
 * code that wants to see the text.
 */
import { conversationPrompt } from "../identity/index.js";
import type { JsonValue } from "../json/index.js";

/**
 * Canonical JSON of `value` with each string normalized with `opts` (roots,
 * rules and `projectPath`). Object keys are kept as they are.
 *
 * @example
 * promptText({ messages: [{ role: "user", content: "Fix /w/a.ts\n\n now" }] }, { projectPath: "/w" })
 * // '{"messages":[{"content":"Fix {project}/a.ts now","role":"user"}]}'
 */
export function promptText(
  value: JsonValue,
  opts: Parameters<typeof conversationPrompt>[1],
): string {
  return conversationPrompt(value, opts);
}

/** `obj[key] = value`, where a `"__proto__"` key stays an ordinary member. */
export function setMember(obj: Record<string, JsonValue>, key: string, value: JsonValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
