/**
 * JSON checks shared by every store: what goes in must be plain JSON, so that
 * what comes out (always a fresh `JSON.parse`) is exactly what went in.
 */
import type { JsonValue } from "./types.js";

/**
 * Throw a `TypeError` naming `argName` and the JSON path unless `value` is a
 * plain JSON value whose `JSON.stringify` round trip is exact.
 *
 * Refused, because JSON would silently change them: `undefined`, functions,
 * symbols, bigints, `NaN`/`±Infinity` (become `null`), array holes (become
 * `null`), class instances such as `Date` or `Map` (become strings or `{}`),
 * and cycles. `-0` is accepted and comes back as `0`. Strings may contain
 * anything, lone surrogates included: `JSON.stringify` writes them as `\uD800`
 * escapes (ES2019 well-formed stringify), so they survive every backend.
 *
 * @example
 * assertJsonValue({ a: [1, "x", null] }, "value") // ok
 * assertJsonValue({ when: new Date() }, "value") // TypeError: value.when is a Date…
 */
export function assertJsonValue(value: unknown, argName: string): asserts value is JsonValue {
  check(value, argName, new Set());
}

function check(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `${path} is ${value}, which JSON cannot represent; store a finite number`,
        );
      }
      return;
    case "object":
      break;
    default:
      throw new TypeError(`${path} is a ${typeof value}, which is not a JSON value`);
  }
  if (value === null) return;
  if (seen.has(value)) throw new TypeError(`${path} is a cycle; JSON values must be trees`);
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new TypeError(`${path}[${i}] is an array hole, not a JSON value`);
      check(value[i], `${path}[${i}]`, seen);
    }
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
      throw new TypeError(`${path} is a ${name}; store plain objects, arrays and primitives only`);
    }
    for (const key of Object.keys(value)) {
      check((value as Record<string, unknown>)[key], `${path}.${key}`, seen);
    }
  }
  // A value may appear twice in a tree (shared, not cyclic): only ancestors count.
  seen.delete(value);
}

/** The envelope keyv wraps every value in: `{ value, expires? }` (epoch ms). */
export interface KeyvRecord {
  value: JsonValue;
  expires?: number;
}

/**
 * Keyv's serializer. We replace `@keyv/serialize` (keyv's default) because it
 * rewrites strings: a string starting with `:` gets another `:` prepended and
 * one starting with `:base64:` comes back as a Buffer when written by another
 * client. Plain `JSON.stringify` is exact for JSON values.
 */
export function serializeRecord(data: { value?: unknown; expires?: number | undefined }): string {
  return JSON.stringify(data.expires === undefined ? { value: data.value } : data);
}

/**
 * Keyv's deserializer: parse, and refuse anything that is not a record we
 * wrote, so corrupt data is an error instead of `undefined` (a false miss).
 */
export function deserializeRecord(text: string): KeyvRecord {
  const parsed: unknown = JSON.parse(text);
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !("value" in parsed) ||
    ("expires" in parsed && typeof parsed.expires !== "number" && parsed.expires !== null)
  ) {
    throw new TypeError("stored record is not {value, expires?}: the data is corrupt or not ours");
  }
  return parsed as KeyvRecord;
}

/** True when a record's keyv expiry has passed (keyv's own rule: `now > expires`). */
export function isExpired(record: KeyvRecord, now = Date.now()): boolean {
  return typeof record.expires === "number" && now > record.expires;
}

/**
 * Deep equality of JSON values, key order ignored, `Object.is` on numbers
 * except that 0 and -0 are equal (JSON cannot tell them apart).
 *
 * @example
 * jsonEqual({ a: 1, b: [2] }, { b: [2], a: 1 }) // true
 */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k]!, b[k]!)) return false;
  }
  return true;
}
