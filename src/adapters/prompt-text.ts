/**
 * The prompt of an SDK call as one string: the conversation as canonical JSON
 * (RFC 8785, so key order never matters), every string in it normalized on
 * its own first. Normalizing string by string matters: inside JSON text a
 * newline is the two characters `\n`, so whitespace runs, and paths next to
 * escapes, would not be seen by a pass over the whole text.
 */
import { canonicalJson } from "../identity/canonical-json.js";
import type { JsonValue } from "../json/value.js";
import { type NormalizeOptions, normalizePrompt } from "../normalize/normalize.js";

/**
 * Canonical JSON of `value` with each string normalized with `opts` (the
 * recorder's roots and rules plus the context's `projectPath`). Object keys
 * are kept as they are.
 *
 * @example
 * promptText({ messages: [{ role: "user", content: "Fix /w/a.ts\n\n now" }] }, { projectPath: "/w" })
 * // '{"messages":[{"content":"Fix {project}/a.ts now","role":"user"}]}'
 */
export function promptText(value: JsonValue, opts: NormalizeOptions): string {
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === "string") return normalizePrompt(v, opts);
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map(walk);
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v)) setMember(out, k, walk(x));
    return out;
  };
  return canonicalJson(walk(value));
}

/** `obj[key] = value`, where a `"__proto__"` key stays an ordinary member. */
export function setMember(obj: Record<string, JsonValue>, key: string, value: JsonValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `disableRules` for the call that hashes a {@link promptText} prompt: the
 * recorder's, plus `whitespace`. Whitespace was settled string by string (a
 * fenced block's indentation kept); inside the JSON text a second pass would
 * collapse that indentation again.
 *
 * @example
 * recorder.call(req, fn, { ...opts, disableRules: promptTextRules(recorder.identity) });
 */
export function promptTextRules(identity: {
  disableRules?: readonly string[] | undefined;
}): string[] {
  return [...(identity.disableRules ?? []), "whitespace"];
}
