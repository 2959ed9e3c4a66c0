/**
 * The single left-to-right scan that applies the table's root, timestamp, UUID
 * and epoch-millis rules (see rules.ts for their patterns). Every check looks
 * ahead a bounded distance, and a match is skipped over whole, so the scan is
 * linear in the text on any input: no backtracking regex is involved.
 *
 * Semantics are exactly those of applying each rule's pattern in table order;
 * the test suite compares the two on random and adversarial text.
 */
import { daysInMonth, MAX_OFFSET_MINUTES } from "./datetime.js";
import { SCAN_EPOCH, SCAN_TIMESTAMP, SCAN_UUID } from "./disable-rules.js";
import * as classes from "./root-matcher.js";
import { isBoundaryBefore, type RootMatcher } from "./root-matcher.js";

// Local copies: imported bindings may be compiled to getters (tsx, vitest),
// which cost more than the rest of the hot loop together.
const { ALNUM, BRACE, CLASS, DIGIT, HEX, SEP } = classes;

/** Where a rule fired, in the whitespace-collapsed text. */
export interface RuleMatch {
  rule: string;
  start: number;
  end: number;
  text: string;
  replacement: string;
}

const cls = (s: string, i: number): number => {
  if (i < 0 || i >= s.length) return 0;
  const c = s.charCodeAt(i);
  return c < 128 ? CLASS[c]! : 0;
};
const isDigit = (s: string, i: number): boolean => (cls(s, i) & DIGIT) !== 0;
const isHex = (s: string, i: number): boolean => (cls(s, i) & HEX) !== 0;
/** Neighbour checks: a brace counts as "glued", like the character classes the rules exclude. */
const gluedHex = (s: string, i: number): boolean => (cls(s, i) & (HEX | BRACE)) !== 0;
const gluedAlnum = (s: string, i: number): boolean => (cls(s, i) & (ALNUM | BRACE)) !== 0;

/** The value of two digits at i (caller checked they are digits). */
const num2 = (s: string, i: number): number =>
  (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);

/** k digits at i? */
function digits(s: string, i: number, k: number): boolean {
  for (let j = i; j < i + k; j++) if (!isDigit(s, j)) return false;
  return true;
}

/**
 * End of an ISO-8601 datetime starting at i, or -1. Reads the rule's shape
 * greedily, as its pattern does (seconds and fraction when present, then a
 * zone `Z`, `±hh:mm`, `±hhmm` or `±hh`), then checks the fields
 * (datetime.ts) and what follows: a candidate that fails either is kept
 * whole, never cut short, so no fragment (`:60`, `:217`) is left behind.
 */
export function timestampEnd(s: string, i: number): number {
  if (!digits(s, i, 4) || s.charCodeAt(i + 4) !== 45 || !digits(s, i + 5, 2)) return -1;
  if (s.charCodeAt(i + 7) !== 45 || !digits(s, i + 8, 2)) return -1;
  const sep = s.charCodeAt(i + 10);
  if (sep !== 84 /* T */ && sep !== 116 /* t */ && sep !== 32) return -1;
  if (!digits(s, i + 11, 2) || s.charCodeAt(i + 13) !== 58 || !digits(s, i + 14, 2)) return -1;
  const year = num2(s, i) * 100 + num2(s, i + 2);
  const month = num2(s, i + 5);
  const day = num2(s, i + 8);
  let ok =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    num2(s, i + 11) <= 23 &&
    num2(s, i + 14) <= 59;
  let q = i + 16;
  if (s.charCodeAt(q) === 58 /* : */ && digits(s, q + 1, 2)) {
    ok &&= num2(s, q + 1) <= 60; // 60: a leap second
    q += 3;
    const f = s.charCodeAt(q);
    if ((f === 46 || f === 44) /* . , */ && isDigit(s, q + 1)) {
      q += 2;
      while (isDigit(s, q)) q++;
    }
  }
  let zone = false;
  const z = s.charCodeAt(q);
  if (z === 90 || z === 122 /* Z z */) {
    q++;
    zone = true;
  } else if ((z === 43 || z === 45) /* + - */ && digits(s, q + 1, 2)) {
    const hours = num2(s, q + 1);
    let minutes = 0;
    q += 3;
    if (s.charCodeAt(q) === 58 && digits(s, q + 1, 2)) {
      minutes = num2(s, q + 1);
      q += 3;
    } else if (digits(s, q, 2)) {
      minutes = num2(s, q);
      q += 2;
    }
    ok &&= minutes <= 59 && hours * 60 + minutes <= MAX_OFFSET_MINUTES;
    zone = true;
  }
  if (!ok || (cls(s, q) & (DIGIT | BRACE)) !== 0) return -1;
  // `:6`, `.5`, `+5`, `:{token}`, `-/path` right after: something we could
  // not read (or that another rule will replace); keep it all.
  const next = s.charCodeAt(q);
  if (
    (next === 58 || next === 46 || (!zone && (next === 43 || next === 45))) &&
    (cls(s, q + 1) & (ALNUM | BRACE | SEP)) !== 0
  ) {
    return -1;
  }
  return q;
}

/**
 * End of a UUID at i, or -1. Caller checked the char before. Dashed
 * 8-4-4-4-12 of any version; bare 32 hex only with RFC 9562 section 4.1
 * variant bits 10xx (digit 17 is 8, 9, a or b), section 4.2 version 1-8
 * (digit 13), and a letter somewhere (32 decimal digits are a number).
 */
export function uuidEnd(s: string, i: number): number {
  let j = i;
  while (j < i + 8 && isHex(s, j)) j++;
  if (j < i + 8) return -1;
  if (s.charCodeAt(j) === 45) {
    // dashed: 4-4-4-12 groups follow
    for (const len of [4, 4, 4, 12]) {
      if (s.charCodeAt(j) !== 45) return -1;
      j++;
      const stop = j + len;
      while (j < stop && isHex(s, j)) j++;
      if (j < stop) return -1;
      if (len !== 12 && s.charCodeAt(j) !== 45) return -1;
    }
    return gluedAlnum(s, j) ? -1 : j;
  }
  let letter = false;
  for (j = i; j < i + 32; j++) {
    if (!isHex(s, j)) return -1;
    if (!isDigit(s, j)) letter = true;
  }
  if (!letter || gluedAlnum(s, j)) return -1;
  const version = s.charCodeAt(i + 12);
  const variant = s.charCodeAt(i + 16) | 0x20; // ASCII lower case
  if (version < 49 /* 1 */ || version > 56 /* 8 */) return -1;
  if (variant !== 56 && variant !== 57 && variant !== 97 && variant !== 98) return -1; // 8 9 a b
  return j;
}

/**
 * End of epoch millis at i, or -1: 13 digits, the first 1-3 (the window
 * 2001-09-09 .. 2096-10-02), no hex or brace after. The caller checked what
 * comes before (epochStartsHere).
 */
export function epochEnd(s: string, i: number): number {
  const first = s.charCodeAt(i);
  if (first < 49 || first > 51 || !digits(s, i, 13)) return -1;
  return gluedHex(s, i + 13) ? -1 : i + 13;
}

/**
 * May epoch millis start at i? Not after hex, a brace or `+` (E.164), nor
 * after `x` or `.` that follows a digit or a token (`0x…`, the fraction of
 * `0.1767…`). `tokenEnd` is where the last root, timestamp or UUID match
 * ended: the character before it is, for the rule table, the `}` of its
 * token (the rules apply in turn, epoch millis last).
 */
function epochStartsHere(s: string, i: number, tokenEnd: number): boolean {
  if (i === 0) return true;
  const p = s.charCodeAt(i - 1);
  if (p === 43 /* + */ || (p < 128 && (CLASS[p]! & (HEX | BRACE)) !== 0)) return false;
  if (p === 120 || p === 88 || p === 46 /* x X . */) {
    if (tokenEnd === i - 1) return false;
    if (isDigit(s, i - 2) || s.charCodeAt(i - 2) === 125 /* } */) return false;
  }
  return true;
}

/**
 * Where a rule can start (the scanner's anchors). Each alternative is a
 * necessary condition of one check below, and matches one character (the
 * rest is lookaround), so the scan resumes right after a failed candidate:
 * - a digit not after a digit, followed by 3 digits and `-` (a timestamp) or
 *   by 7 more hex digits (epoch millis are 13 digits; a UUID starts with 8
 *   hex). A digit after a digit starts nothing: every rule needs a non-digit
 *   (timestamp) or non-hex (UUID, epoch millis) before it;
 * - a hex letter not after an alphanumeric or brace, followed by 7 more hex
 *   digits (a UUID);
 * - with roots, a path separator (POSIX and UNC spellings start with one),
 *   and, when a spelling starts with a drive letter, a letter before `:`
 *   (root-matcher.ts, `starts`).
 */
const DIGIT_OR_HEX =
  "(?<![0-9])[0-9](?=[0-9]{3}-|[0-9A-Fa-f]{7})|(?<![0-9A-Za-z{}])[A-Fa-f](?=[0-9A-Fa-f]{7})";
const CANDIDATES = new RegExp(DIGIT_OR_HEX, "g");
const CANDIDATES_ROOTS = new RegExp(`[/\\\\]|${DIGIT_OR_HEX}`, "g");
const CANDIDATES_DRIVE = new RegExp(`[/\\\\]|[A-Za-z](?=:)|${DIGIT_OR_HEX}`, "g");
/** A root spelling that starts some other way: every ASCII alphanumeric or separator. */
const CANDIDATES_ANY = /[/\\0-9A-Za-z]/g;

/**
 * Apply roots, timestamps, UUIDs and epoch millis in one pass over
 * already whitespace-collapsed text. `trace`, when given, receives every match;
 * `off` holds the SCAN_* bits of rules turned off (disable-rules.ts).
 */
export function scan(s: string, roots: RootMatcher, trace?: RuleMatch[], off = 0): string {
  // Anchors first: a native regex jumps to the few positions where a rule
  // can start (see CANDIDATES), so ordinary text costs one regex step per
  // character instead of a JavaScript loop iteration. Each candidate is then
  // checked exactly as before; every check reads its own context, so
  // visiting a superset of the positions that can match changes nothing.
  const tryRoots = !roots.empty;
  const re = !tryRoots
    ? CANDIDATES
    : roots.starts === "sep"
      ? CANDIDATES_ROOTS
      : roots.starts === "drive"
        ? CANDIDATES_DRIVE
        : CANDIDATES_ANY;
  let out = "";
  let last = 0;
  let tokenEnd = -1;
  re.lastIndex = 0;
  // test(), not exec(): no match object per candidate; every alternative
  // consumes one character, so the candidate is the one before lastIndex.
  while (re.test(s)) {
    const i = re.lastIndex - 1;
    const c = s.charCodeAt(i);
    const k = CLASS[c]!;
    let end = -1;
    let rule = "";
    let token = "";
    if (tryRoots && ((k & SEP) !== 0 || s.charCodeAt(i + 1) === 58) && isBoundaryBefore(s, i)) {
      const r = roots.matchAt(s, i);
      if (r !== undefined) {
        end = r.end;
        rule = r.root.rule;
        token = r.root.token;
      }
    }
    if (end < 0 && (k & HEX) !== 0) {
      const p = i > 0 ? s.charCodeAt(i - 1) : 32;
      const pk = p < 128 ? CLASS[p]! : 0;
      if ((k & DIGIT) !== 0 && (pk & (DIGIT | BRACE)) === 0 && (off & SCAN_TIMESTAMP) === 0) {
        end = timestampEnd(s, i);
        rule = "timestamp";
        token = "{timestamp}";
      }
      if (end < 0 && (pk & (ALNUM | BRACE)) === 0 && (off & SCAN_UUID) === 0) {
        end = uuidEnd(s, i);
        rule = "uuid";
        token = "{uuid}";
      }
      if (
        end < 0 &&
        (k & DIGIT) !== 0 &&
        (off & SCAN_EPOCH) === 0 &&
        epochStartsHere(s, i, tokenEnd)
      ) {
        end = epochEnd(s, i);
        rule = "epoch-millis";
        token = "{timestamp}";
      }
    }
    if (end < 0) continue; // the regex moved on by one character
    if (trace !== undefined)
      trace.push({ rule, start: i, end, text: s.slice(i, end), replacement: token });
    out += s.slice(last, i) + token;
    if (rule !== "epoch-millis") tokenEnd = end;
    last = end;
    re.lastIndex = end;
  }
  return last === 0 ? s : out + s.slice(last);
}
