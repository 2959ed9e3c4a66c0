/**
 * The part of a stored record a replay hit reads: keyv's record text
 * (`{"value":{…},"expires":…}`) with the value's `manifest` member cut out,
 * found by a structural scan instead of a parse.
 *
 * Why: an entry's manifest carries the whole normalized conversation, so on
 * turn 40 of an agent loop it is ~160 KB of a record whose response is
 * ~2 KB. A hit serves the response and checks the id and meta; parsing the
 * manifest into objects (and collecting them again) was most of its cost.
 * The scan only finds where the manifest's JSON text ends: it jumps from
 * one string to the next with native `indexOf` and counts brackets between
 * them, which reads the text at memory speed and builds nothing. What is
 * left (the record without the manifest) is then parsed with `JSON.parse`
 * as before, so everything the hit uses is checked by the full grammar.
 *
 * The scan checks the manifest's string and bracket structure, not every
 * token inside it (a number's digits): corruption inside the manifest that
 * keeps that structure goes unnoticed by a hit, as corruption inside the
 * response's strings always did. A text the scan does not follow (other
 * whitespace is fine; anything unexpected is not) yields `undefined`, and
 * the caller parses the whole record as before.
 */

/**
 * `text` (a keyv record as `serializeRecord` writes it, or any JSON text
 * of that shape) without the `manifest` member of its `value` object;
 * the text unchanged when that object has no manifest member; `undefined`
 * when the text is not a record this scan follows (parse it whole instead).
 *
 * @example
 * recordWithoutManifest('{"value":{"v":1,"manifest":{"a":[1]},"response":2}}')
 * // '{"value":{"v":1,"response":2}}'
 */
export function recordWithoutManifest(text: string): string | undefined {
  let i = ws(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = ws(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return text;
  // The record's members: descend into "value", skip the others.
  while (true) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const name = text.slice(i, keyEnd);
    i = ws(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = ws(text, i + 1);
    if (name === '"value"' && text.charCodeAt(i) === OPEN_BRACE) {
      return cutManifest(text, i);
    }
    const end = skipValue(text, i);
    if (end < 0) return undefined;
    i = ws(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return text; // no "value" object: nothing to cut
    if (c !== COMMA) return undefined;
    i = ws(text, i + 1);
  }
}

/** `text` without the `"manifest"` member of the object opening at `open`. */
function cutManifest(text: string, open: number): string | undefined {
  let i = ws(text, open + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return text;
  // Where the previous member's value ended (its comma follows), or -1 before the first member.
  let previousEnd = -1;
  while (true) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyStart = i;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const isManifest = text.slice(keyStart, keyEnd) === '"manifest"';
    i = ws(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = ws(text, i + 1);
    const end = skipValue(text, i);
    if (end < 0) return undefined;
    const after = ws(text, end);
    const c = text.charCodeAt(after);
    if (c !== COMMA && c !== CLOSE_BRACE) return undefined;
    if (isManifest) {
      // A later member: cut from the comma before it. The first member: cut
      // it and the comma after it (or it alone, the object's only member).
      if (previousEnd >= 0) return text.slice(0, previousEnd) + text.slice(end);
      if (c === CLOSE_BRACE) return text.slice(0, keyStart) + text.slice(after);
      return text.slice(0, keyStart) + text.slice(ws(text, after + 1));
    }
    if (c === CLOSE_BRACE) return text; // no manifest member
    previousEnd = end;
    i = ws(text, after + 1);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The index after JSON whitespace from `i`. */
function ws(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i);
  return i;
}

/** The index after the string whose opening quote is at `i`, or -1 when it never closes. */
function skipString(text: string, i: number): number {
  let j = i;
  while (true) {
    j = text.indexOf('"', j + 1);
    if (j < 0) return -1;
    // Escaped when an odd number of backslashes precede it.
    let k = j - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((j - 1 - k) % 2 === 0) return j + 1;
  }
}

// The next character that opens or closes something (strings are skipped whole).
const STRUCTURAL = /["[\]{}]/g;

/** The index after the JSON value starting at `i`, or -1 when its structure does not close. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
    // A number, true, false or null: up to the next delimiter.
    let j = i;
    let d = c;
    while (
      j < text.length &&
      d !== COMMA &&
      d !== CLOSE_BRACE &&
      d !== CLOSE_BRACKET &&
      d !== 0x20 &&
      d !== 0x0a &&
      d !== 0x0d &&
      d !== 0x09
    ) {
      d = text.charCodeAt(++j);
    }
    return j > i ? j : -1;
  }
  // Brackets must close in order: a stack of the closers owed.
  const owed: number[] = [c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET];
  let j = i + 1;
  while (true) {
    STRUCTURAL.lastIndex = j;
    const m = STRUCTURAL.exec(text);
    if (m === null) return -1;
    const at = m.index;
    const s = text.charCodeAt(at);
    if (s === QUOTE) {
      j = skipString(text, at);
      if (j < 0) return -1;
      continue;
    }
    if (s === OPEN_BRACE) owed.push(CLOSE_BRACE);
    else if (s === OPEN_BRACKET) owed.push(CLOSE_BRACKET);
    else if (owed.pop() !== s) return -1;
    j = at + 1;
    if (owed.length === 0) return j;
  }
}

/**
 * `value` without its `manifest` member when it is an object that has one
 * (changed in place: callers pass a fresh copy), else `value`.
 *
 * @example
 * withoutManifest({ id: "x", manifest: {} }) // { id: "x" }
 */
export function withoutManifest<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "manifest" in value) {
    delete (value as Record<string, unknown>).manifest;
  }
  return value;
}
