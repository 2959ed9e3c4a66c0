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
  type NormalizeOptions,
  type PreparedNormalizer,
  prepareNormalizer,
} from "../normalize/internal.js";
import { canonicalJson, canonicalString } from "./canonical-json.js";
import type { ManifestValue } from "./manifest-types.js";

/**
 * Strings up to this length are normalized once per conversation: roles,
 * part types and tool names repeat on every message, and even with the
 * options resolved once per request (prepareNormalizer) each string costs
 * its passes' setup, however short.
 */
const MEMO_MAX = 64;

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
  return preparedConversationPrompt(value, prepareNormalizer(opts), counts);
}

/**
 * {@link conversationPrompt} with the options already prepared: the
 * identity prepares them once per request, for the conversation and the task.
 */
export function preparedConversationPrompt(
  value: unknown,
  prepared: PreparedNormalizer,
  counts?: Record<string, number>,
): string {
  const text = normalizer(prepared, counts);
  // One pass: each string normalized and written as canonical JSON where it
  // stands, members sorted as they are written, no copy of the tree.
  const w: FusedWriter = { out: [], hole: false };
  write(value, "request.conversation", text, new Set(), w);
  // A hole in an array (never from JSON.parse) is refused by the canonical
  // writer after the whole walk: the original two passes say it, in their order.
  if (w.hole) return canonicalJson(walk(value, "request.conversation", text, new Set()));
  return w.out.join("");
}

/** How each string is normalized: counted for miss reports, else short ones memoized. */
function normalizer(
  prepared: PreparedNormalizer,
  counts?: Record<string, number>,
): (s: string) => string {
  if (counts !== undefined) {
    return (s: string) => {
      const report = prepared.explain(s);
      for (const [rule, n] of Object.entries(report.counts)) counts[rule] = (counts[rule] ?? 0) + n;
      return report.output;
    };
  }
  // Pure: the table, the roots, the secret scanner and caller rules (a
  // pattern and a replacement string) give one string one answer.
  const memo = new Map<string, string>();
  return (s) => {
    if (s.length > MEMO_MAX) return prepared.normalize(s);
    let out = memo.get(s);
    if (out === undefined) {
      out = prepared.normalize(s);
      memo.set(s, out);
    }
    return out;
  };
}

interface FusedWriter {
  out: string[];
  /** An array hole was seen (the text in `out` is then unusable). */
  hole: boolean;
}

/**
 * Write the canonical JSON of `v` with each string normalized into `w.out`.
 * The same checks, errors and order of visits as {@link walk} (members in
 * their own order, so the first bad one named is the same), then the members
 * sorted as canonicalJson sorts them (UTF-16 code units).
 */
function write(
  v: unknown,
  path: string,
  text: (s: string) => string,
  seen: Set<object>,
  w: FusedWriter,
): void {
  switch (typeof v) {
    case "string":
      w.out.push(canonicalString(text(v)));
      return;
    case "boolean":
      w.out.push(v ? "true" : "false");
      return;
    case "number":
      // ECMAScript Number::toString, as canonicalJson writes it (-0 -> "0").
      if (Number.isFinite(v)) w.out.push(String(v));
      else
        throw new TypeError(
          `${path} is ${v}, which JSON cannot represent; use null or a finite number`,
        );
      return;
    case "object":
      break;
    default:
      throw new TypeError(`${path} is a ${typeof v}, which is not a JSON value`);
  }
  if (v === null) {
    w.out.push("null");
    return;
  }
  if (seen.has(v))
    throw new TypeError(`${path} contains a cycle; a conversation is a tree of JSON values`);
  seen.add(v);
  try {
    if (Array.isArray(v)) {
      w.out.push("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) w.out.push(",");
        if (!(i in v)) w.hole = true;
        else write(v[i], `${path}[${i}]`, text, seen, w);
      }
      w.out.push("]");
      return;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(
        `${path} is a ${proto?.constructor?.name ?? "non-plain object"}; a conversation must be plain JSON (encode it first)`,
      );
    }
    // Each member's pieces as they were written (moved, never joined: a long
    // string is copied once, when the whole prompt is joined).
    const members: [string, string[]][] = [];
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue; // as JSON.stringify does
      const mark = w.out.length;
      write(x, `${path}.${k}`, text, seen, w);
      members.push([k, w.out.splice(mark)]);
    }
    if (members.length > 1) members.sort(([a], [b]) => (a < b ? -1 : 1)); // keys are distinct
    w.out.push("{");
    for (let i = 0; i < members.length; i++) {
      const [k, pieces] = members[i]!;
      w.out.push(i > 0 ? "," : "", canonicalString(k), ":");
      for (const piece of pieces) w.out.push(piece);
    }
    w.out.push("}");
  } finally {
    seen.delete(v);
  }
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
