/**
 * The single left-to-right scan that applies the table's root, timestamp, UUID
 * and epoch-millis rules (see rules.ts for their patterns). Every check looks
 * ahead a bounded distance, and a match is skipped over whole, so the scan is
 * linear in the text on any input: no backtracking regex is involved.
 *
 * Semantics are exactly those of applying each rule's pattern in table order;
 * the test suite compares the two on random and adversarial text.
 */

import { nextLongRun } from "../secrets/internal.js";
import { daysInMonth, MAX_OFFSET_MINUTES } from "./datetime.js";
import * as disable from "./disable-rules.js";
import * as classes from "./root-matcher.js";
import { isBoundaryBefore, type RootMatcher } from "./root-matcher.js";

// Local copies: imported bindings may be compiled to getters (tsx, vitest),
// which cost more than the rest of the hot loop together.
const { ALNUM, BRACE, CLASS, DIGIT, HEX, SEP } = classes;
const { SCAN_EPOCH, SCAN_TIMESTAMP, SCAN_UUID } = disable;
/** The groups after a dashed UUID's first 8 hex digits. */
const UUID_GROUPS = [4, 4, 4, 12] as const;

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
    for (const len of UUID_GROUPS) {
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
 * Where a rule can start (the scanner's anchors). Every timestamp, UUID and
 * epoch-millis match is, or begins, a maximal run of hex characters of one
 * exact length, with a rule-specific character after it (the rules' own
 * neighbour checks make the run maximal):
 * - a timestamp: 4 digits, then the `-` of its date (after a hex letter
 *   too: `ab2026-09-09T10:00`);
 * - a dashed UUID: 8 hex characters, then `-`;
 * - a bare UUID: a run of exactly 32 hex characters;
 * - epoch millis: a run of exactly 13 digits.
 * So the candidates are found by three cheap searches instead of visiting
 * every hex run (hex letters are a quarter of English letters): the `-`
 * characters (native indexOf), looking back 4 and 8 characters from each;
 * and digit runs of 13 and hex runs of 32, found by reading every 13th and
 * every 32nd character (long-runs.ts). With roots whose spellings start with
 * a path separator, `/` and `\` are the roots' anchors (found by indexOf).
 * Each anchor is a necessary condition only: the candidate is then checked
 * in full (ruleAt), so visiting a superset of the positions that can match
 * changes nothing (the property tests compare with the reference).
 */
const TIMESTAMP_LEAD = 4;
const DASHED_UUID_LEAD = 8;
const EPOCH_DIGITS = 13;
const BARE_UUID_HEX = 32;

const DIGITS_ONLY = new Uint8Array(128);
const HEX_ONLY = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  DIGITS_ONLY[c] = (CLASS[c]! & DIGIT) !== 0 ? 1 : 0;
  HEX_ONLY[c] = (CLASS[c]! & HEX) !== 0 ? 1 : 0;
}

/** k characters of class `bit` from i? (i may be negative: false) */
function allOf(s: string, i: number, k: number, bit: number): boolean {
  if (i < 0) return false;
  for (let j = i; j < i + k; j++) {
    const c = s.charCodeAt(j);
    if (c >= 128 || (CLASS[c]! & bit) === 0) return false;
  }
  return true;
}

/**
 * The first candidate at or after `from` read back from a `-`: `d - 8`
 * when the 8 characters before the `-` at d are hex (a dashed UUID),
 * `d - 4` when the 4 before it are digits (a timestamp); `s.length` when
 * there is none. Candidates come out in increasing order as the dashes do:
 * a later dash whose look-back reaches before an earlier candidate would
 * have that earlier dash inside its hex or digit lead.
 */
function nextDashCandidate(s: string, from: number): number {
  for (let d = s.indexOf("-", from + TIMESTAMP_LEAD); d >= 0; d = s.indexOf("-", d + 1)) {
    const uuidAt = d - DASHED_UUID_LEAD;
    if (uuidAt >= from && allOf(s, uuidAt, DASHED_UUID_LEAD, HEX)) return uuidAt;
    if (allOf(s, d - TIMESTAMP_LEAD, TIMESTAMP_LEAD, DIGIT)) return d - TIMESTAMP_LEAD;
  }
  return s.length;
}

/** The start of the first maximal run of exactly `len` `table` characters at or after `from`, or `s.length`. */
function nextRunOf(s: string, from: number, table: Uint8Array, len: number): number {
  for (let at = from; ; ) {
    const r = nextLongRun(s, at, table, len);
    if (r === undefined) return s.length;
    if (r.end - r.start === len) return r.start;
    at = r.end;
  }
}

/** The next candidate of each anchor search, kept until the scan passes it. */
interface Anchors {
  dash: number;
  epoch: number;
  bare: number;
}

/** The first rule candidate at or after `from` (`s.length`: none), refreshing the searches it passed. */
function nextCandidate(s: string, from: number, a: Anchors, off: number): number {
  const n = s.length;
  if (a.dash < from) {
    a.dash =
      (off & (SCAN_TIMESTAMP | SCAN_UUID)) === (SCAN_TIMESTAMP | SCAN_UUID)
        ? n
        : nextDashCandidate(s, from);
  }
  if (a.epoch < from) {
    a.epoch = (off & SCAN_EPOCH) !== 0 ? n : nextRunOf(s, from, DIGITS_ONLY, EPOCH_DIGITS);
  }
  if (a.bare < from) {
    a.bare = (off & SCAN_UUID) !== 0 ? n : nextRunOf(s, from, HEX_ONLY, BARE_UUID_HEX);
  }
  return Math.min(a.dash, a.epoch, a.bare);
}

/** The next `/` or `\\` at or after `from`, or `s.length`. */
function nextSep(s: string, from: number, slash: number[]): number {
  // slash[0], slash[1]: the next `/` and `\\` found so far (indexOf is native and fast).
  if (slash[0]! < from) {
    const k = s.indexOf("/", from);
    slash[0] = k < 0 ? s.length : k;
  }
  if (slash[1]! < from) {
    const k = s.indexOf("\\", from);
    slash[1] = k < 0 ? s.length : k;
  }
  return Math.min(slash[0]!, slash[1]!);
}

/**
 * The older per-character anchors, kept for roots that start with a drive
 * letter (`C:`) or in some other way: there a root may start inside what
 * would be a hex run, which the run anchors above do not visit.
 * - a digit not after a digit, followed by 3 digits and `-` (a timestamp) or
 *   by 7 more hex digits (epoch millis are 13 digits; a UUID starts with 8
 *   hex);
 * - a hex letter not after an alphanumeric or brace, followed by 7 more hex
 *   digits (a UUID);
 * - a path separator, and a letter before `:` (root-matcher.ts, `starts`).
 */
const DIGIT_OR_HEX =
  "(?<![0-9])[0-9](?=[0-9]{3}-|[0-9A-Fa-f]{7})|(?<![0-9A-Za-z{}])[A-Fa-f](?=[0-9A-Fa-f]{7})";
const CANDIDATES_DRIVE = new RegExp(`[/\\\\]|[A-Za-z](?=:)|${DIGIT_OR_HEX}`, "g");
/** A root spelling that starts some other way: every ASCII alphanumeric or separator. */
const CANDIDATES_ANY = /[/\\0-9A-Za-z]/g;

/** A match found by {@link ruleAt}: its end (-1: none), rule and token. */
interface Hit {
  end: number;
  rule: string;
  token: string;
}

/**
 * Apply roots, timestamps, UUIDs and epoch millis in one pass over
 * already whitespace-collapsed text. `trace`, when given, receives every match;
 * `off` holds the SCAN_* bits of rules turned off (disable-rules.ts).
 *
 * With `parts`, the answer is not returned but pushed there in pieces (the
 * text between matches and the tokens, in order: their concatenation is the
 * answer) and "" is returned. The answer is a rope of those pieces anyway,
 * and its first reader pays to join it into one string the size of the
 * text; a caller that only hashes it (invocationIdentity's long prompts)
 * skips that allocation, which for a long prompt is a large object of its
 * own (docs/performance.md, "A fresh page costs ~16 µs on this machine").
 * No two pieces of text meet without a token between them, so no piece
 * boundary falls inside a surrogate pair.
 */
export function scan(
  s: string,
  roots: RootMatcher,
  trace?: RuleMatch[],
  off = 0,
  parts?: string[],
): string {
  if (!roots.empty && roots.starts !== "sep")
    return scanEveryCandidate(s, roots, trace, off, parts);
  const n = s.length;
  const tryRoots = !roots.empty;
  const hit: Hit = { end: -1, rule: "", token: "" };
  const anchors: Anchors = { dash: -1, epoch: -1, bare: -1 };
  const slash = [-1, -1];
  let out = "";
  let last = 0;
  let tokenEnd = -1;
  let pos = 0; // no rule starts before pos
  for (;;) {
    const cand = nextCandidate(s, pos, anchors, off);
    const sep = tryRoots ? nextSep(s, pos, slash) : n;
    // A separator is never a rule candidate (those are hex): no tie.
    const i = Math.min(sep, cand);
    if (i >= n) break;
    hit.end = -1;
    if (i === sep) {
      if (isBoundaryBefore(s, i)) rootAt(s, i, roots, hit);
    } else ruleAt(s, i, off, tokenEnd, hit);
    if (hit.end < 0) {
      pos = i + 1;
      continue;
    }
    const { end, rule, token } = hit;
    if (trace !== undefined)
      trace.push({ rule, start: i, end, text: s.slice(i, end), replacement: token });
    if (parts === undefined) out += s.slice(last, i) + token;
    else parts.push(s.slice(last, i), token);
    if (rule !== "epoch-millis") tokenEnd = end;
    last = end;
    pos = end;
  }
  return answer(s, out, last, parts);
}

/** The end of a scan: the answer, or with `parts` its last piece pushed and "". */
function answer(s: string, out: string, last: number, parts: string[] | undefined): string {
  if (parts === undefined) return last === 0 ? s : out + s.slice(last);
  parts.push(last === 0 ? s : s.slice(last));
  return "";
}

/** The root at i (the caller checked the boundary before it), into `hit`. */
function rootAt(s: string, i: number, roots: RootMatcher, hit: Hit): void {
  const r = roots.matchAt(s, i);
  if (r !== undefined) {
    hit.end = r.end;
    hit.rule = r.root.rule;
    hit.token = r.root.token;
  }
}

/** A timestamp, UUID or epoch millis starting at i, in table order, into `hit`. */
function ruleAt(s: string, i: number, off: number, tokenEnd: number, hit: Hit): void {
  const k = cls(s, i);
  if ((k & HEX) === 0) return;
  const p = i > 0 ? s.charCodeAt(i - 1) : 32;
  const pk = p < 128 ? CLASS[p]! : 0;
  if ((k & DIGIT) !== 0 && (pk & (DIGIT | BRACE)) === 0 && (off & SCAN_TIMESTAMP) === 0) {
    const end = timestampEnd(s, i);
    if (end >= 0) {
      hit.end = end;
      hit.rule = "timestamp";
      hit.token = "{timestamp}";
      return;
    }
  }
  if ((pk & (ALNUM | BRACE)) === 0 && (off & SCAN_UUID) === 0) {
    const end = uuidEnd(s, i);
    if (end >= 0 && !timestampInside(s, end, off)) {
      hit.end = end;
      hit.rule = "uuid";
      hit.token = "{uuid}";
      return;
    }
  }
  if ((k & DIGIT) !== 0 && (off & SCAN_EPOCH) === 0 && epochStartsHere(s, i, tokenEnd)) {
    const end = epochEnd(s, i);
    if (end >= 0) {
      hit.end = end;
      hit.rule = "epoch-millis";
      hit.token = "{timestamp}";
    }
  }
}

/**
 * Does a timestamp start inside the UUID ending at `end`? The table applies
 * timestamps first, so one that begins in the UUID's last 4 hex digits and
 * runs on past its end (`…0305e82c3301-09-09T14:33`) wins and the UUID is
 * kept. No other position inside a UUID can start a timestamp: its 4 digits
 * must be followed by `-`, and the only `-` a UUID can be followed by at
 * that distance is the one after it.
 */
function timestampInside(s: string, end: number, off: number): boolean {
  if (s.charCodeAt(end) !== 45 || (off & SCAN_TIMESTAMP) !== 0) return false;
  return !isDigit(s, end - 5) && timestampEnd(s, end - 4) >= 0;
}

/**
 * The scan for roots that do not start with a separator: every position the
 * per-character anchors find is tried (roots first, then the other rules).
 */
function scanEveryCandidate(
  s: string,
  roots: RootMatcher,
  trace: RuleMatch[] | undefined,
  off: number,
  parts: string[] | undefined,
): string {
  const re = roots.starts === "drive" ? CANDIDATES_DRIVE : CANDIDATES_ANY;
  const hit: Hit = { end: -1, rule: "", token: "" };
  let out = "";
  let last = 0;
  let tokenEnd = -1;
  re.lastIndex = 0;
  // Every alternative consumes one character: the candidate is the one before lastIndex.
  while (re.test(s)) {
    const i = re.lastIndex - 1;
    const k = CLASS[s.charCodeAt(i)]!;
    hit.end = -1;
    if (((k & SEP) !== 0 || s.charCodeAt(i + 1) === 58) && isBoundaryBefore(s, i)) {
      rootAt(s, i, roots, hit);
    }
    if (hit.end < 0) ruleAt(s, i, off, tokenEnd, hit);
    if (hit.end < 0) continue; // the regex moved on by one character
    const { end, rule, token } = hit;
    if (trace !== undefined)
      trace.push({ rule, start: i, end, text: s.slice(i, end), replacement: token });
    if (parts === undefined) out += s.slice(last, i) + token;
    else parts.push(s.slice(last, i), token);
    if (rule !== "epoch-millis") tokenEnd = end;
    last = end;
    re.lastIndex = end;
  }
  return answer(s, out, last, parts);
}
