/**
 * RFC 8785 JSON Canonicalization Scheme (JCS), with one deliberate extension:
 * lone surrogates are kept and encoded as WTF-8 instead of being rejected.
 *
 * - §3.2.2.2 strings: only `"`, `\`, and U+0000..U+001F are escaped; the
 *   seven short escapes (\b \t \n \f \r \" \\) are used where they exist,
 *   `\u00xx` with lowercase hex otherwise; everything else is literal.
 *   For a well-formed string that is exactly ECMAScript's QuoteJSONString,
 *   so native code does the work (`JSON.stringify`, or for long strings
 *   without control characters two `replaceAll` passes); both would spoil
 *   lone surrogates, so strings with one take the plain loop.
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

const CONTROL = /[\u0000-\u001f]/;

/** Up to this many names are sorted by insertion (see {@link sortNames}). */
const INSERTION_MAX = 12;

/**
 * Sort distinct member names in place by UTF-16 code units (RFC 8785
 * §3.2.3), as `Array.prototype.sort()` does: `<` compares strings by code
 * units too, and names of one object never tie. Why not `sort()` itself:
 * a request's objects have two to a few members, and the built-in's call
 * costs more than sorting them here (about a tenth of a tiny identity went
 * to sorting the few members of a message and of the params).
 */
export function sortNames(keys: string[]): string[] {
  const n = keys.length;
  if (n > INSERTION_MAX) return keys.sort();
  for (let i = 1; i < n; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * From this length on, strings are escaped with two `replaceAll` passes
 * rather than `JSON.stringify`: about 2.5x faster on an 8 KiB prompt, slower
 * at 1 and 2 KiB (docs/performance.md, "Identity core").
 */
const REPLACE_MIN = 2048;

/** Serialize a string per RFC 8785 §3.2.2.2. */
export function canonicalString(s: string): string {
  // Short strings in one step: no writer, sink or pieces (names, roles, messages).
  return s.length < REPLACE_MIN ? quotedShort(s) : canonicalJson(s);
}

/** Push the escaped form of `s` (quoted, or only its inside) with its well-formedness. */
function pushEscaped(w: Writer, s: string, quoted: boolean): void {
  if (s.length < REPLACE_MIN) {
    // Nothing to escape (keys, names, most one-line prompts): the text is its
    // own escaped form, found by one read instead of a JSON.stringify (about
    // 5 µs for 1 KiB in Node 20's V8; this loop well under one).
    if (escapesNothing(s)) {
      push(w, quoted ? `"${s}"` : s, s.isWellFormed());
      return;
    }
    // JSON.stringify writes a lone surrogate as \udxxx; nothing else makes it
    // write "\ud" but a backslash before "ud", so only then is s checked.
    const json = JSON.stringify(s);
    if (!json.includes("\\ud") || s.isWellFormed()) push(w, quoted ? json : json.slice(1, -1));
    else push(w, escapeLoop(s, quoted), false);
  } else if (CONTROL.test(s)) {
    // Control characters (a fenced block's line breaks): JSON.stringify
    // escapes everything in one pass, and only its "\ud" calls for the
    // well-formedness check (one pass fewer than checking first).
    const json = JSON.stringify(s);
    if (!json.includes("\\ud") || s.isWellFormed()) push(w, quoted ? json : json.slice(1, -1));
    else push(w, escapeLoop(s, quoted), false);
  } else if (!s.isWellFormed()) {
    push(w, escapeLoop(s, quoted), false);
  } else {
    // Only " and \ to escape: \ first, so the \ added before " is not doubled.
    const body = s.replaceAll("\\", "\\\\").replaceAll('"', '\\"');
    push(w, quoted ? `"${body}"` : body);
  }
}

/** True when `s` holds none of `"`, `\`, U+0000..U+001F: RFC 8785 escapes nothing in it. */
function escapesNothing(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** The escaping spelled out, for strings with lone surrogates (kept as they are). */
function escapeLoop(s: string, quoted: boolean): string {
  let out = quoted ? '"' : "";
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      out += s.slice(last, i) + (SHORT_ESCAPES[c] ?? `\\u00${c.toString(16).padStart(2, "0")}`);
      last = i + 1;
    }
  }
  return `${out}${s.slice(last)}${quoted ? '"' : ""}`;
}

/** Up to this length {@link canonicalStringTwice} escapes in one JavaScript pass (measured faster at 2 KiB). */
const TWICE_MAX = 8192;

/** Each escaped character as RFC 8785 writes it (index: the code unit). */
const ESCAPED: string[] = [];
/** That escaped again, as a canonical JSON string holding it writes it. */
const ESCAPED_TWICE: string[] = [];
for (let c = 0; c < 0x20; c++) {
  ESCAPED[c] = SHORT_ESCAPES[c] ?? `\\u00${c.toString(16).padStart(2, "0")}`;
}
ESCAPED[0x22] = SHORT_ESCAPES[0x22]!;
ESCAPED[0x5c] = SHORT_ESCAPES[0x5c]!;
for (let c = 0; c <= 0x5c; c++) {
  const e = ESCAPED[c];
  if (e !== undefined) ESCAPED_TWICE[c] = e.replaceAll("\\", "\\\\").replaceAll('"', '\\"');
}

/**
 * `[canonicalString(s), canonicalString(canonicalString(s)).slice(1, -1), s.isWellFormed()]`:
 * a string as canonical JSON writes it, and that text's inside as canonical
 * JSON writes it once more (a conversation's strings are hashed escaped
 * twice: once in the prompt, once as the manifest's string holding the
 * prompt). Both from one read of `s`, cut at the characters to escape: for
 * a ~2 KiB message with line breaks, `JSON.stringify` twice (or the
 * well-formedness checks and `replaceAll` passes of the long path) cost about
 * a third more than this loop and its slices. Lone surrogates are kept as
 * they are, as canonical JSON keeps them (no `JSON.stringify`, so nothing to
 * undo). Longer strings take the native passes (faster on large text).
 */
export function canonicalStringTwice(
  s: string,
): [quoted: string, twice: string, wellFormed: boolean] {
  // Escaping adds ASCII only, so both texts are well-formed exactly when s is.
  const wellFormed = s.isWellFormed();
  if (s.length > TWICE_MAX) {
    const p = canonicalString(s);
    // p holds no control character: escaping it again is only \ and ".
    return [p, p.replaceAll("\\", "\\\\").replaceAll('"', '\\"'), wellFormed];
  }
  // Pieces joined, not concatenated: join gives flat strings, where `+=`
  // gives ropes of slices that would hold the normalized text alive inside
  // the reuse cache beside them (its count assumes flat strings).
  const once: string[] = ['"'];
  const twice: string[] = ['\\"'];
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      const chunk = s.slice(last, i);
      once.push(chunk, ESCAPED[c]!);
      twice.push(chunk, ESCAPED_TWICE[c]!);
      last = i + 1;
    }
  }
  const tail = s.slice(last);
  once.push(tail, '"');
  twice.push(tail, '\\"');
  return [once.join(""), twice.join(""), wellFormed];
}

/**
 * Canonical JSON text of a JSON value (RFC 8785).
 *
 * @example
 * canonicalJson({ b: [1, 2.5e-7], a: "é" }) // '{"a":"é","b":[1,2.5e-7]}'
 */
export function canonicalJson(value: CanonicalValue): string {
  const pieces: string[] = [];
  writeCanonicalJson(value, (piece) => pieces.push(piece));
  return pieces.join("");
}

/**
 * Receives canonical JSON text piece by piece. `wellFormed` is false when the
 * piece may hold a lone surrogate (so it must be encoded as WTF-8, not UTF-8).
 * A surrogate pair is never split across two pieces, so encoding the pieces
 * one by one gives the bytes of the whole text.
 */
export type PieceSink = (piece: string, wellFormed: boolean) => void;

/**
 * Pieces are cut at about this many UTF-16 code units. Kept small so that no
 * string built on the way (escaped slices, pieces) is big enough for V8's
 * large-object space: on a 100 KiB prompt, allocating and copying one big
 * string costs more than escaping it (docs/performance.md, "Identity core").
 */
const PIECE = 8192;

/**
 * Write the canonical JSON text of a value as pieces whose concatenation is
 * `canonicalJson(value)`; long strings are escaped slice by slice. This is
 * how an identity is hashed without building the whole text.
 *
 * @example
 * const parts: string[] = [];
 * writeCanonicalJson({ b: "x", a: [1] }, (piece) => parts.push(piece));
 * parts.join("") // '{"a":[1],"b":"x"}'
 */
export function writeCanonicalJson(value: CanonicalValue, sink: PieceSink): void {
  const w: Writer = { text: "", wellFormed: true, sink };
  writeValue(value, w);
  flush(w);
}

interface Writer {
  /** Text not passed on yet. */
  text: string;
  /** False once `text` may hold a lone surrogate. */
  wellFormed: boolean;
  sink: PieceSink;
}

function push(w: Writer, text: string, wellFormed = true): void {
  w.text += text;
  if (!wellFormed) w.wellFormed = false;
  if (w.text.length >= PIECE) flush(w);
}

function flush(w: Writer): void {
  if (w.text !== "") w.sink(w.text, w.wellFormed);
  w.text = "";
  w.wellFormed = true;
}

function writeValue(value: CanonicalValue, w: Writer): void {
  switch (typeof value) {
    case "string":
      writeString(value, w);
      return;
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`JCS: ${value} is not a JSON number`);
      push(w, String(value)); // ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires; -0 -> "0"
      return;
    case "boolean":
      push(w, value ? "true" : "false");
      return;
    case "object": {
      if (value === null) {
        push(w, "null");
        return;
      }
      if (Array.isArray(value)) {
        const items = value as readonly CanonicalValue[];
        push(w, "[");
        for (let i = 0; i < items.length; i++) {
          if (i > 0) push(w, ",");
          // A hole is not JSON (it would write "[1,,2]"): refuse it.
          if (!(i in items))
            throw new TypeError(`JCS: array index ${i} is a hole, not a JSON value`);
          writeValue(items[i]!, w);
        }
        push(w, "]");
        return;
      }
      const obj = value as { readonly [key: string]: CanonicalValue };
      const keys = sortNames(Object.keys(obj)); // UTF-16 code unit order, RFC 8785 §3.2.3
      push(w, "{");
      for (let i = 0; i < keys.length; i++) {
        if (i > 0) push(w, ",");
        writeString(keys[i]!, w);
        push(w, ":");
        writeValue(obj[keys[i]!]!, w);
      }
      push(w, "}");
      return;
    }
    default:
      throw new TypeError(`JCS: a ${typeof value} is not a JSON value`);
  }
}

function writeString(s: string, w: Writer): void {
  if (s.length <= PIECE) {
    pushEscaped(w, s, true);
    return;
  }
  push(w, '"');
  for (let i = 0; i < s.length; ) {
    let end = Math.min(i + PIECE, s.length);
    const last = s.charCodeAt(end - 1);
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--; // keep a surrogate pair whole
    pushEscaped(w, s.slice(i, end), false);
    i = end;
  }
  push(w, '"');
}

/**
 * The inside of the canonical JSON string of `parts.join("")` (the text
 * between its quotes), in pieces whose concatenation it is, without joining
 * the parts: a long prompt's normalized pieces (normalize's
 * `normalizedParts`) escaped for the manifest's hash. Cut like
 * {@link writeCanonicalJson}'s pieces (about {@link PIECE} code units, never
 * inside a surrogate pair: a part that ends in a high surrogate whose low
 * one starts the next part hands it on). `wellFormed`: every piece is.
 */
export function escapedInside(parts: readonly string[]): { pieces: string[]; wellFormed: boolean } {
  const pieces: string[] = [];
  let wellFormed = true;
  const w: Writer = {
    text: "",
    wellFormed: true,
    sink: (piece, ok) => {
      pieces.push(piece);
      if (!ok) wellFormed = false;
    },
  };
  let carry = "";
  for (let k = 0; k < parts.length; k++) {
    let p = carry === "" ? parts[k]! : carry + parts[k]!;
    carry = "";
    const next = parts[k + 1];
    if (
      next !== undefined &&
      p.length > 0 &&
      isHigh(p.charCodeAt(p.length - 1)) &&
      isLow(next.charCodeAt(0))
    ) {
      carry = p.slice(-1);
      p = p.slice(0, -1);
    }
    for (let i = 0; i < p.length; ) {
      let end = Math.min(i + PIECE, p.length);
      if (end < p.length && isHigh(p.charCodeAt(end - 1))) end--; // keep a surrogate pair whole
      pushEscaped(w, p.slice(i, end), false);
      i = end;
    }
  }
  flush(w);
  return { pieces, wellFormed };
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * The canonical JSON text of a small value as one string, or undefined when
 * the value is not small (a string of {@link REPLACE_MIN} code units or
 * more, a text past `budget`) or not plain JSON (a hole, a non-finite number,
 * `undefined`, a function…): the caller then takes {@link canonicalJson},
 * which writes the large ones and reports the bad ones. The same text as
 * `canonicalJson(value)` whenever it answers (test/identity/small-manifest.test.ts);
 * the text may hold lone surrogates (check `isWellFormed()` before hashing
 * it as UTF-8). Why it exists: an identity of a tiny request is mostly
 * fixed cost, and the piece writer's sink, writer object and pieces array
 * were a fifth of it (docs/performance.md, issue 32 §2).
 */
export function smallCanonicalJson(value: CanonicalValue, budget: number): string | undefined {
  const out = small(value, budget);
  return out !== undefined && out.length <= budget ? out : undefined;
}

function small(value: CanonicalValue, budget: number): string | undefined {
  switch (typeof value) {
    case "string":
      return value.length < REPLACE_MIN ? quotedShort(value) : undefined;
    case "number":
      return Number.isFinite(value) ? String(value) : undefined;
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      let text: string;
      if (Array.isArray(value)) {
        const items = value as readonly CanonicalValue[];
        text = "[";
        for (let i = 0; i < items.length; i++) {
          if (!(i in items)) return undefined;
          const item = small(items[i]!, budget);
          if (item === undefined) return undefined;
          text += i > 0 ? `,${item}` : item;
          if (text.length > budget) return undefined;
        }
        return `${text}]`;
      }
      const obj = value as { readonly [key: string]: CanonicalValue };
      const keys = sortNames(Object.keys(obj)); // as writeValue: UTF-16 code unit order
      text = "{";
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        const v = obj[k];
        if (k.length >= REPLACE_MIN || v === undefined) return undefined;
        const member = small(v, budget);
        if (member === undefined) return undefined;
        text += `${i > 0 ? "," : ""}${quotedShort(k)}:${member}`;
        if (text.length > budget) return undefined;
      }
      return `${text}}`;
    }
    default:
      return undefined;
  }
}

/** `pushEscaped(s, quoted)`'s text for a string under {@link REPLACE_MIN} code units. */
function quotedShort(s: string): string {
  if (escapesNothing(s)) return `"${s}"`;
  const json = JSON.stringify(s);
  return !json.includes("\\ud") || s.isWellFormed() ? json : escapeLoop(s, true);
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
