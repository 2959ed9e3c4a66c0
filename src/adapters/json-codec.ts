/**
 * A lossless JSON encoding for the values SDKs hand back that JSON cannot
 * hold (the recorder stores plain JSON only). The convention, documented in
 * docs/integrations.md:
 *
 * | value                 | stored as                                                   |
 * | --------------------- | ----------------------------------------------------------- |
 * | `Date`                | `{ "$invocache": "Date", "iso": "2026-01-01T00:00:00.000Z" }` (`iso: null` for an invalid date) |
 * | `Uint8Array` (Buffer) | `{ "$invocache": "Uint8Array", "base64": "…" }`             |
 * | `ArrayBuffer`         | `{ "$invocache": "ArrayBuffer", "base64": "…" }`            |
 * | `URL`                 | `{ "$invocache": "URL", "href": "https://…" }`              |
 * | `NaN`, `±Infinity`    | `{ "$invocache": "Number", "value": "NaN" }`                |
 * | `undefined` in arrays | `{ "$invocache": "undefined" }` (object members that are `undefined` are dropped, as JSON does) |
 * | an object that has its own `$invocache` key | `{ "$invocache": "Object", "value": { … } }` (escaped, so it never decodes as a tag) |
 *
 * Anything else that is not plain JSON (Error, Map, class instances,
 * functions, bigint, cycles) has no lossless form: it is encoded as
 * `{ "$invocache": "unstorable", "type": "…" }` and the whole encoding is
 * reported lossy, so the adapter hands the live value back and never stores it.
 */
import { isPlainPrototype, type JsonValue } from "../json/index.js";

/** The tag key. */
export const TAG = "$invocache";

/** Result of {@link encodeJson}. */
export interface Encoded {
  json: JsonValue;
  /** False when some part had no lossless form: never store such a value. */
  lossless: boolean;
}

/**
 * Encode a value as JSON, tagging Dates, bytes, URLs and non-finite numbers.
 *
 * @example
 * encodeJson({ at: new Date(0) }).json // { at: { $invocache: "Date", iso: "1970-01-01T00:00:00.000Z" } }
 */
export function encodeJson(value: unknown): Encoded {
  const state = { lossless: true };
  const json = enc(value, state, new Set());
  return { json, lossless: state.lossless };
}

function unstorable(type: string, state: { lossless: boolean }): JsonValue {
  state.lossless = false;
  return { [TAG]: "unstorable", type };
}

function enc(value: unknown, state: { lossless: boolean }, seen: Set<object>): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : { [TAG]: "Number", value: String(value) };
    case "undefined":
      return { [TAG]: "undefined" };
    case "object":
      break;
    default:
      return unstorable(typeof value, state);
  }
  if (value === null) return null;
  if (value instanceof Date) {
    const t = value.getTime();
    return { [TAG]: "Date", iso: Number.isNaN(t) ? null : value.toISOString() };
  }
  if (value instanceof Uint8Array) return { [TAG]: "Uint8Array", base64: base64(value) };
  if (value instanceof ArrayBuffer) {
    return { [TAG]: "ArrayBuffer", base64: base64(new Uint8Array(value)) };
  }
  if (value instanceof URL) return { [TAG]: "URL", href: value.href };
  if (seen.has(value)) return unstorable("cycle", state);
  seen.add(value);
  try {
    if (Array.isArray(value)) return Array.from(value, (v) => enc(v, state, seen));
    const proto = Object.getPrototypeOf(value);
    if (!isPlainPrototype(proto)) {
      const name = (value as { constructor?: { name?: string } }).constructor?.name;
      return unstorable(typeof name === "string" && name !== "" ? name : "object", state);
    }
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue; // as JSON.stringify does
      // defineProperty: a "__proto__" member stays an ordinary member.
      Object.defineProperty(out, k, {
        value: enc(v, state, seen),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return Object.hasOwn(out, TAG) ? { [TAG]: "Object", value: out } : out;
  } finally {
    seen.delete(value);
  }
}

/**
 * Decode what {@link encodeJson} produced (or any plain JSON).
 *
 * @throws TypeError on an unknown tag, or an `unstorable` one (never stored).
 * @example
 * decodeJson({ $invocache: "Date", iso: "1970-01-01T00:00:00.000Z" }) // Date(0)
 */
export function decodeJson(value: JsonValue): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(decodeJson);
  if (Object.hasOwn(value, TAG)) {
    const tag = value[TAG];
    switch (tag) {
      case "Date":
        return new Date(typeof value.iso === "string" ? value.iso : Number.NaN);
      case "Uint8Array":
        return fromBase64(value.base64);
      case "ArrayBuffer": {
        const bytes = fromBase64(value.base64);
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      }
      case "URL":
        return new URL(String(value.href));
      case "Number":
        return Number(value.value);
      case "undefined":
        return undefined;
      case "Object":
        return decodeMembers(value.value);
      default:
        throw new TypeError(
          `invocache: cannot decode a recorded value tagged ${JSON.stringify(tag)}; it was not written by this invocache. Re-record with INVOCACHE_MODE=record.`,
        );
    }
  }
  return decodeMembers(value);
}

function decodeMembers(value: JsonValue | undefined): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError("invocache: a recorded $invocache Object tag does not hold an object");
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    Object.defineProperty(out, k, {
      value: decodeJson(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

function fromBase64(text: JsonValue | undefined): Uint8Array {
  if (typeof text !== "string") {
    throw new TypeError("invocache: a recorded byte array has no base64 text");
  }
  const buf = Buffer.from(text, "base64");
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).slice();
}

/**
 * A number literal a double may not hold: a digit, then an exponent of
 * three digits or more, or 309+ digits. It may also match inside a string
 * (an id); that only costs the reviver, never a wrong value.
 */
const HUGE_NUMBER = /\d[eE][+]?\d{3}|\d{309}/;

/**
 * Parse a provider's JSON answer into a value the recorder can store. JSON
 * text can spell a number a double cannot hold: `1e400` parses to
 * `Infinity`, which no store can keep, so recording threw after the
 * provider had answered (and been paid). Such a number is read as its
 * JavaScript spelling, the string `"Infinity"` (or `"-Infinity"`): the
 * answer is returned, recorded and replayed alike, and a usage count
 * spelled so is reported implausible and dropped by the recorder
 * (src/usage/extract.ts, `readUsage`). Text with no huge literal (the test
 * is a regex, linear) is parsed as it is, with no reviver.
 *
 * @example
 * parseProviderJson('{"usage":{"prompt_tokens":1e400}}') // { usage: { prompt_tokens: "Infinity" } }
 */
export function parseProviderJson(text: string): JsonValue {
  if (!HUGE_NUMBER.test(text)) return JSON.parse(text) as JsonValue;
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === "number" && !Number.isFinite(value) ? String(value) : value,
  ) as JsonValue;
}
