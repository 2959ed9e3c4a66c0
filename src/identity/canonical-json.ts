/**
 * RFC 8785 JSON Canonicalization Scheme (JCS), with one deliberate extension:
 * lone surrogates are kept and encoded as WTF-8 instead of being rejected.
 *
 * - §3.2.2.2 strings: only `"`, `\`, and U+0000..U+001F are escaped; the
 *   seven short escapes (\b \t \n \f \r \" \\) are used where they exist,
 *   `\u00xx` with lowercase hex otherwise; everything else is literal.
 *   (`JSON.stringify` escapes lone surrogates as `\udxxx`, so it is not used.)
 * - §3.2.2.3 numbers: ECMAScript `Number.prototype.toString`, which is what
 *   `String(n)` gives in JavaScript (-0 becomes "0"); NaN and ±Infinity are
 *   not JSON and are rejected.
 * - §3.2.3 object members sorted by their names as arrays of UTF-16 code
 *   units: JavaScript's default string comparison.
 *
 * Input must already be a plain JSON value (see `toJsonValue` in manifest.ts).
 */

export type CanonicalValue =
  | null
  | boolean
  | number
  | string
  | readonly CanonicalValue[]
  | { readonly [key: string]: CanonicalValue };

const SHORT_ESCAPES: Record<number, string> = {
  8: "\\b",
  9: "\\t",
  10: "\\n",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\",
};

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** Serialize a string per RFC 8785 §3.2.2.2. */
export function canonicalString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      out += s.slice(last, i) + (SHORT_ESCAPES[c] ?? `\\u00${c.toString(16).padStart(2, "0")}`);
      last = i + 1;
    }
  }
  return `${out}${s.slice(last)}"`;
}

/**
 * Canonical JSON text of a JSON value (RFC 8785).
 *
 * @example
 * canonicalJson({ b: [1, 2.5e-7], a: "é" }) // '{"a":"é","b":[1,2.5e-7]}'
 */
export function canonicalJson(value: CanonicalValue): string {
  switch (typeof value) {
    case "string":
      return canonicalString(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`JCS: ${value} is not a JSON number`);
      return String(value); // ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires; -0 -> "0"
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        return `[${(value as readonly CanonicalValue[]).map(canonicalJson).join(",")}]`;
      }
      const obj = value as { readonly [key: string]: CanonicalValue };
      const keys = Object.keys(obj).sort(); // UTF-16 code unit order, RFC 8785 §3.2.3
      return `{${keys.map((k) => `${canonicalString(k)}:${canonicalJson(obj[k]!)}`).join(",")}}`;
    }
    default:
      throw new TypeError(`JCS: a ${typeof value} is not a JSON value`);
  }
}

/**
 * WTF-8: UTF-8 that also encodes lone surrogates (as their 3-byte
 * generalized-UTF-8 form, like Python's `surrogatepass`). Well-formed strings
 * get exactly their UTF-8 bytes. Two different strings never share bytes,
 * which `TextEncoder` (lone surrogate -> U+FFFD) cannot promise.
 */
export function wtf8(s: string): Uint8Array {
  if (s.isWellFormed()) return new TextEncoder().encode(s);
  const out = new Uint8Array(s.length * 3);
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out[o++] = c;
    else if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      out[o++] = 0xe0 | (c >> 12);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    } else {
      out[o++] = 0xf0 | (c >> 18);
      out[o++] = 0x80 | ((c >> 12) & 0x3f);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    }
  }
  return out.subarray(0, o);
}
