/**
 * A fast reader for the exact YAML subset our writer (emit.ts) produces,
 * so a cold load does not pay for the general parser (the `yaml` package
 * reads ~5–11 MB/s and builds a full syntax tree; this reads the same text
 * in one pass into plain values, several times faster and with a fraction
 * of the memory).
 *
 * It is a shortcut, never a second dialect: on anything outside the subset
 * (comments, anchors, tags, single quotes, folded or indented-indicator
 * blocks, multi-line flow, tabs or odd indentation, CRLF, a key that is not
 * a string, a repeated key…) it returns undefined and the caller runs the
 * full parser, which gives the same value or the error with its line and
 * column. Inside the subset it follows YAML 1.2 with the core schema exactly
 * as the `yaml` package reads it: the round-trip property test
 * (test/cassette/fast-parse.test.ts) checks both readers give equal values on
 * random emitted cassettes, and that hand-edited variants fall back.
 *
 * The subset, by construction of the writer:
 * - block mappings `key: value` and block sequences `- item` (compact
 *   `- key: value` items), two spaces per level, sequences indented under
 *   their key;
 * - scalars: plain (resolved like the core schema: null, booleans, ints,
 *   floats, else a string), one-line double-quoted with escapes, literal
 *   blocks `|`, `|-`, `|+`;
 * - one-line flow collections `{ a: 1, b: [ x, y ] }`, `[]`, `{}`.
 */
import { setMember } from "../json/index.js";

/** Thrown inside the reader when the text leaves the subset; never escapes it. */
class OutsideSubset {}
const OUTSIDE = new OutsideSubset();

/** Deeper than the loader allows anyway (parse.ts refuses past MAX_VALUE_DEPTH + 3): let the full parser say so. */
const MAX_DEPTH = 259;

/**
 * Characters never taken raw inside a quoted scalar: line breaks, tabs and
 * C0 controls (the writer escapes them). A tab is taken inside a plain
 * scalar, never at its edges. (A byte order mark is special to the lexer
 * only at the start of the text, which parseEmitted refuses.)
 */
const UNSAFE_QUOTED = /[\u0000-\u001f]/;

/** Inside a plain scalar: a comment, a mapping indicator, a break or a control character. */
const PLAIN_BAD = /: |:\t| #|\t#|[\u0000-\u0008\u000a-\u001f]/;
const FLOW_INDICATOR = /[,[\]{}]/;

/** First characters of a plain scalar: 1 never (an indicator or a blank), 2 only before a non-blank. */
const INDICATOR = new Uint8Array(128);
for (const ch of ",[]{}#&*!|>'\"%@` \t") INDICATOR[ch.charCodeAt(0)] = 1;
for (const ch of "-?:") INDICATOR[ch.charCodeAt(0)] = 2;

/** Plain scalars of the core schema that are not strings start with one of these. */
const MAYBE_TYPED = /^[~nNtTfF0-9+\-.]/;
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

const ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
};

/**
 * The value of `text` when it is in the writer's subset, else undefined
 * (then parse it with the full parser).
 *
 * @example
 * parseEmitted("invocache: 1\nentries: []\n") // { invocache: 1, entries: [] }
 * parseEmitted("invocache: 1 # comment\nentries: []\n") // undefined
 */
export function parseEmitted(text: string): unknown {
  if (
    text.length === 0 ||
    text.charCodeAt(0) === 0xfeff ||
    text.charCodeAt(text.length - 1) !== 10 ||
    text.includes("\r")
  ) {
    return undefined;
  }
  try {
    const reader = new Reader(text);
    const value = reader.mapping(0, 0, 0);
    return reader.pos === text.length ? value : undefined;
  } catch (error) {
    if (error === OUTSIDE) return undefined;
    throw error;
  }
}

function outside(): never {
  throw OUTSIDE;
}

class Reader {
  /** Start of the line being read. */
  pos = 0;
  constructor(readonly text: string) {}

  /** Spaces at the start of the line at `pos`; a tab there leaves the subset. */
  indentAt(lineStart: number): number {
    const t = this.text;
    let i = lineStart;
    while (t.charCodeAt(i) === 32) i++;
    if (t.charCodeAt(i) === 9) outside();
    return i - lineStart;
  }

  eol(from: number): number {
    const nl = this.text.indexOf("\n", from);
    return nl < 0 ? outside() : nl;
  }

  /**
   * A block mapping whose keys sit at column `indent`; the first key starts
   * at `first` (mid-line for a compact `- key: value` item).
   */
  mapping(first: number, indent: number, depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) outside();
    const t = this.text;
    const obj: Record<string, unknown> = {};
    let at = first;
    for (;;) {
      if (indent === 0 && (t.startsWith("---", at) || t.startsWith("...", at))) outside();
      let key: string;
      let colon: number;
      if (t.charCodeAt(at) === 34) {
        const q = this.quoted(at);
        key = q.value;
        colon = q.end;
        if (t.charCodeAt(colon) !== 58) outside();
      } else {
        const end = this.eol(at);
        colon = t.indexOf(":", at);
        while (colon >= 0 && colon < end && t.charCodeAt(colon + 1) !== 32 && colon + 1 !== end) {
          colon = t.indexOf(":", colon + 1);
        }
        if (colon < 0 || colon >= end) outside();
        key = plainString(t.slice(at, colon), false);
      }
      const next = t.charCodeAt(colon + 1);
      let value: unknown;
      if (next === 10) {
        const lineStart = colon + 2;
        if (lineStart >= t.length) outside();
        const m = this.indentAt(lineStart);
        if (m <= indent) outside(); // `key:` and nothing under it (null): never written
        value = this.block(lineStart, m, depth + 1);
      } else if (next === 32) {
        value = this.inline(colon + 2, indent, depth + 1);
      } else {
        outside();
      }
      setKey(obj, key, value);
      // `pos` is now the start of the line after the value.
      if (this.pos >= t.length) return obj;
      const m = this.indentAt(this.pos);
      if (m < indent) return obj;
      if (m > indent || t.charCodeAt(this.pos + m) === 10) outside();
      at = this.pos + m;
      if (t.charCodeAt(at) === 45 && isBlank(t.charCodeAt(at + 1))) outside(); // a list beside the keys
    }
  }

  /** A block node (mapping or sequence) whose line starts at `lineStart` with `indent` spaces. */
  block(lineStart: number, indent: number, depth: number): unknown {
    const at = lineStart + indent;
    const t = this.text;
    if (t.charCodeAt(at) === 45 && isBlank(t.charCodeAt(at + 1)))
      return this.sequence(at, indent, depth);
    return this.mapping(at, indent, depth);
  }

  /** A block sequence whose `- ` markers sit at column `indent`; the first at `first`. */
  sequence(first: number, indent: number, depth: number): unknown[] {
    if (depth > MAX_DEPTH) outside();
    const t = this.text;
    const arr: unknown[] = [];
    let dash = first;
    for (;;) {
      if (t.charCodeAt(dash + 1) !== 32) outside(); // `-` alone on its line: never written
      const at = dash + 2;
      const c = t.charCodeAt(at);
      if (c === 45 && isBlank(t.charCodeAt(at + 1))) {
        arr.push(this.sequence(at, indent + 2, depth + 1));
      } else if (this.startsKey(at)) {
        arr.push(this.mapping(at, indent + 2, depth + 1));
      } else {
        arr.push(this.inline(at, indent, depth + 1));
      }
      if (this.pos >= t.length) return arr;
      const m = this.indentAt(this.pos);
      if (m < indent) return arr;
      dash = this.pos + m;
      if (m > indent || t.charCodeAt(dash) !== 45 || !isBlank(t.charCodeAt(dash + 1))) outside();
    }
  }

  /** Whether the node at `at` is a `key: …` (a compact mapping in a list item). */
  startsKey(at: number): boolean {
    const t = this.text;
    const c = t.charCodeAt(at);
    if (c === 34) {
      const q = this.quoted(at);
      return t.charCodeAt(q.end) === 58;
    }
    if (c === 91 || c === 123 || c === 124 || c === 62) return false; // flow, block scalar
    const end = this.eol(at);
    for (let i = t.indexOf(":", at); i >= 0 && i < end; i = t.indexOf(":", i + 1)) {
      const n = t.charCodeAt(i + 1);
      if (n === 32 || i + 1 === end) return true;
    }
    return false;
  }

  /**
   * A value that starts mid-line at `at` (after `key: ` or `- `), owned by
   * a key or marker at column `owner`. Leaves `pos` at the next line.
   */
  inline(at: number, owner: number, depth: number): unknown {
    const t = this.text;
    const c = t.charCodeAt(at);
    if (c === 34) {
      const q = this.quoted(at);
      if (t.charCodeAt(q.end) !== 10) outside();
      this.pos = q.end + 1;
      return q.value;
    }
    if (c === 124) return this.literal(at, owner);
    if (c === 91 || c === 123) {
      const f = this.flow(at, depth);
      if (t.charCodeAt(f.end) !== 10) outside();
      this.pos = f.end + 1;
      return f.value;
    }
    const end = this.eol(at);
    this.pos = end + 1;
    return plain(t.slice(at, end), false);
  }

  /** A literal block scalar (`|`, `|-`, `|+`) whose header is at `at`, content under column `owner`. */
  literal(at: number, owner: number): string {
    const t = this.text;
    let h = at + 1;
    let chomp = t.charCodeAt(h);
    let indent = -1;
    if (chomp === 45 || chomp === 43) h++;
    const digit = t.charCodeAt(h);
    if (digit >= 49 && digit <= 57) {
      // An indentation indicator (text starting with a space): relative to the key or `-` column.
      indent = owner + digit - 48;
      h++;
      if (chomp !== 45 && chomp !== 43) {
        chomp = t.charCodeAt(h);
        if (chomp === 45 || chomp === 43) h++;
      }
    }
    if (t.charCodeAt(h) !== 10) outside(); // a comment, another header
    let line = h + 1;
    const lines: string[] = [];
    let trailingEmpty = 0;
    let leadingBlanks = 0; // most spaces on an empty line before the first text line
    while (line < t.length) {
      const end = this.eol(line);
      let s = line;
      while (t.charCodeAt(s) === 32) s++;
      const spaces = s - line;
      if (s === end && (indent < 0 || spaces <= indent)) {
        // An empty line (spaces up to the indentation are not content).
        if (indent < 0) leadingBlanks = Math.max(leadingBlanks, spaces);
        lines.push("");
        trailingEmpty++;
        line = end + 1;
        continue;
      }
      if (indent < 0) {
        if (spaces <= owner) break; // only empty lines: an empty or all-newlines string
        if (leadingBlanks > spaces) outside(); // the full parser refuses this
        indent = spaces;
      }
      if (spaces < indent) break;
      lines.push(t.slice(line + indent, end));
      trailingEmpty = 0;
      line = end + 1;
    }
    if (indent < 0 && leadingBlanks > 0) outside(); // blank lines only, some with spaces: rare, let the full parser read it
    this.pos = line;
    const body = lines.slice(0, lines.length - trailingEmpty).join("\n");
    if (chomp === 45) return body;
    if (chomp === 43) return `${lines.join("\n")}\n`;
    return `${body}\n`;
  }

  /** A one-line double-quoted scalar starting at `at`; `end` is just past its closing quote. */
  quoted(at: number): { value: string; end: number } {
    const t = this.text;
    let out = "";
    let from = at + 1;
    for (;;) {
      const q = t.indexOf('"', from);
      if (q < 0) outside();
      // An escape is looked for up to the quote only: searching the rest of the text made the read quadratic.
      let raw = t.slice(from, q);
      const b = raw.indexOf("\\");
      const stop = b < 0 ? q : from + b;
      if (b >= 0) raw = raw.slice(0, b);
      if (UNSAFE_QUOTED.test(raw)) outside(); // raw breaks, tabs, controls: not how we write them
      out += raw;
      if (stop === q) return { value: out, end: q + 1 };
      const e = t[stop + 1]!;
      const simple = ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        from = stop + 2;
        continue;
      }
      const len = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : outside();
      const hex = t.slice(stop + 2, stop + 2 + len);
      if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) outside();
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff) outside();
      out += String.fromCodePoint(code);
      from = stop + 2 + len;
    }
  }

  /** A flow collection on one line starting at `at` (`{ a: 1 }`, `[ x, y ]`, `{}`, `[]`). */
  flow(at: number, depth: number): { value: unknown; end: number } {
    if (depth > MAX_DEPTH) outside();
    const t = this.text;
    const open = t.charCodeAt(at);
    const close = open === 123 ? 125 : 93;
    if (t.charCodeAt(at + 1) === close) return { value: open === 123 ? {} : [], end: at + 2 };
    if (t.charCodeAt(at + 1) !== 32) outside();
    let p = at + 2;
    const obj: Record<string, unknown> = {};
    const arr: unknown[] = [];
    for (;;) {
      let key: string | undefined;
      if (open === 123) {
        if (t.charCodeAt(p) === 34) {
          const q = this.quoted(p);
          key = q.value;
          p = q.end;
          if (t.charCodeAt(p) !== 58) outside();
        } else {
          const colon = t.indexOf(": ", p);
          const end = this.eol(p);
          if (colon < 0 || colon > end) outside();
          key = plainString(t.slice(p, colon), true);
          p = colon;
        }
        if (t.charCodeAt(p + 1) !== 32) outside();
        p += 2;
      }
      const v = this.flowValue(p, depth + 1);
      if (key === undefined) arr.push(v.value);
      else setKey(obj, key, v.value);
      p = v.end;
      const c = t.charCodeAt(p);
      if (c === 44 && t.charCodeAt(p + 1) === 32) {
        p += 2;
      } else if (c === 32 && t.charCodeAt(p + 1) === close) {
        return { value: open === 123 ? obj : arr, end: p + 2 };
      } else {
        outside();
      }
    }
  }

  flowValue(at: number, depth: number): { value: unknown; end: number } {
    const t = this.text;
    const c = t.charCodeAt(at);
    if (c === 34) return this.quoted(at);
    if (c === 91 || c === 123) return this.flow(at, depth);
    // A plain scalar in flow ends at `, ` or ` }` / ` ]`; anything fancier leaves the subset.
    let end = at;
    for (;;) {
      const ch = t.charCodeAt(end);
      if (ch === 44 || ch === 93 || ch === 125 || ch === 10 || Number.isNaN(ch)) break;
      end++;
    }
    const stop = t.charCodeAt(end);
    if (stop === 10 || Number.isNaN(stop)) outside();
    if (stop !== 44) end--; // the space before `}` / `]`
    return { value: plain(t.slice(at, end), true), end };
  }
}

function isBlank(c: number): boolean {
  return c === 32 || c === 10;
}

/** A `key:` (or `"key":`) becomes a property; a repeated key or a non-string key leaves the subset. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (Object.hasOwn(obj, key)) outside();
  setMember(obj, key, value);
}

/** A plain key: it must be a string under the core schema (else the full parser reports it). */
function plainString(s: string, inFlow: boolean): string {
  const v = plain(s, inFlow);
  return typeof v === "string" ? v : outside();
}

/**
 * A plain scalar's value under the core schema, when `s` is a plain scalar
 * whose extent is unambiguous (no comment, no `: `, no edge blanks, no
 * indicator at its start, no flow indicator in flow).
 */
function plain(s: string, inFlow: boolean): unknown {
  const n = s.length;
  if (n === 0) outside();
  const c = s.charCodeAt(0);
  const last = s.charCodeAt(n - 1);
  if (last === 32 || last === 9 || last === 58 || INDICATOR[c] === 1) outside();
  // `-`, `?`, `:` start a plain scalar only when a non-blank follows.
  if (INDICATOR[c] === 2 && (n === 1 || s.charCodeAt(1) === 32 || s.charCodeAt(1) === 9)) outside();
  if (PLAIN_BAD.test(s) || (inFlow && FLOW_INDICATOR.test(s))) outside();
  if (!MAYBE_TYPED.test(s)) return s;
  if (NULL.test(s)) return null;
  if (BOOL.test(s)) return c === 116 || c === 84;
  if (INT_OCT.test(s)) return Number.parseInt(s.slice(2), 8);
  if (INT.test(s)) return Number.parseInt(s, 10);
  if (INT_HEX.test(s)) return Number.parseInt(s.slice(2), 16);
  if (FLOAT_NAN.test(s)) {
    return s.slice(-3).toLowerCase() === "nan"
      ? Number.NaN
      : s[0] === "-"
        ? Number.NEGATIVE_INFINITY
        : Number.POSITIVE_INFINITY;
  }
  if (FLOAT_EXP.test(s) || FLOAT.test(s)) return Number.parseFloat(s);
  return s;
}
