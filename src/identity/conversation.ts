/**
 * A structured conversation (`request.conversation`: the messages of an SDK
 * call as JSON) becomes the manifest's `prompt`: canonical JSON (RFC 8785, so
 * key order never matters) with every string normalized on its own first.
 * String by string matters: inside JSON text a newline is the two characters
 * `\n`, so whitespace runs, and paths next to escapes, would not be seen by a
 * pass over the whole text. Object keys are kept as they are. The text is
 * not normalized again as a whole (that second pass changed nothing and cost
 * milliseconds on long conversations).
 *
 * This is the recipe v1 prompt adapters have always produced, so identities
 * are unchanged; only where it is computed moved (into the identity).
 */
import {
  explainNormalization,
  type NormalizeOptions,
  normalizePrompt,
} from "../normalize/normalize.js";
import { canonicalJson } from "./canonical-json.js";
import type { ManifestValue } from "./manifest-types.js";

/**
 * The manifest prompt of a conversation. With `counts`, also add up how
 * often each normalization rule fired (for miss reports).
 *
 * @example
 * conversationPrompt({ messages: [{ role: "user", content: "Fix /w/a.ts\n\n now" }] }, { projectPath: "/w" })
 * // '{"messages":[{"content":"Fix {project}/a.ts now","role":"user"}]}'
 */
export function conversationPrompt(
  value: unknown,
  opts: NormalizeOptions,
  counts?: Record<string, number>,
): string {
  const text =
    counts === undefined
      ? (s: string) => normalizePrompt(s, opts)
      : (s: string) => {
          const report = explainNormalization(s, opts);
          for (const [rule, n] of Object.entries(report.counts))
            counts[rule] = (counts[rule] ?? 0) + n;
          return report.output;
        };
  return canonicalJson(walk(value, "request.conversation", text, new Set()));
}

/** A copy of `v` with each string normalized; anything that is not plain JSON is a TypeError. */
function walk(
  v: unknown,
  path: string,
  text: (s: string) => string,
  seen: Set<object>,
): ManifestValue {
  switch (typeof v) {
    case "string":
      return text(v);
    case "boolean":
      return v;
    case "number":
      if (Number.isFinite(v)) return v;
      throw new TypeError(
        `${path} is ${v}, which JSON cannot represent; use null or a finite number`,
      );
    case "object":
      break;
    default:
      throw new TypeError(`${path} is a ${typeof v}, which is not a JSON value`);
  }
  if (v === null) return null;
  if (seen.has(v))
    throw new TypeError(`${path} contains a cycle; a conversation is a tree of JSON values`);
  seen.add(v);
  try {
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${path}[${i}]`, text, seen));
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(
        `${path} is a ${proto?.constructor?.name ?? "non-plain object"}; a conversation must be plain JSON (encode it first)`,
      );
    }
    const out: Record<string, ManifestValue> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue; // as JSON.stringify does
      // defineProperty: a "__proto__" key stays an ordinary member.
      Object.defineProperty(out, k, {
        value: walk(x, `${path}.${k}`, text, seen),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    seen.delete(v);
  }
}
