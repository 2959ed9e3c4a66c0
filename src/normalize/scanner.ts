/**
 * The single left-to-right scan that applies the table's root, timestamp, UUID
 * and epoch-millis rules (see rules.ts for their patterns). Every check looks
 * ahead a bounded distance, and a match is skipped over whole, so the scan is
 * linear in the text on any input: no backtracking regex is involved.
 *
 * Semantics are exactly those of applying each rule's pattern in table order;
 * the test suite compares the two on random and adversarial text.
 */
import * as classes from "./root-matcher.js";
import { isBoundaryBefore, type RootMatcher } from "./root-matcher.js";

// Local copies: imported bindings may be compiled to getters (tsx, vitest),
// which cost more than the rest of the hot loop together.
const { ALNUM, BRACE, CLASS, DIGIT, HEX, LETTER, SEP } = classes;

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

/** Two digits at i forming a number in [lo, hi]. */
function twoDigits(s: string, i: number, lo: number, hi: number): boolean {
  if (!isDigit(s, i) || !isDigit(s, i + 1)) return false;
  const v = (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);
  return v >= lo && v <= hi;
}

/**
 * End of an ISO-8601 datetime starting at i, or -1. Mirrors the regex
 * alternatives in priority order (seconds before none; zone `Z`, `+hh:mm`,
 * `+hhmm`, `+hh`, then none), each accepted only when no digit follows.
 */
export function timestampEnd(s: string, i: number): number {
  // date: YYYY-MM-DD
  if (!(isDigit(s, i) && isDigit(s, i + 1) && isDigit(s, i + 2) && isDigit(s, i + 3))) return -1;
  if (s.charCodeAt(i + 4) !== 45 || !twoDigits(s, i + 5, 1, 12)) return -1;
  if (s.charCodeAt(i + 7) !== 45 || !twoDigits(s, i + 8, 1, 31)) return -1;
  const sep = s.charCodeAt(i + 10);
  if (sep !== 84 /* T */ && sep !== 116 /* t */ && sep !== 32) return -1;
  if (!twoDigits(s, i + 11, 0, 24) || s.charCodeAt(i + 13) !== 58 || !twoDigits(s, i + 14, 0, 59)) {
    return -1;
  }
  const hm = i + 16;
  if (s.charCodeAt(hm) === 58 /* : */ && twoDigits(s, hm + 1, 0, 60)) {
    let q = hm + 3;
    const f = s.charCodeAt(q);
    if ((f === 46 || f === 44) && isDigit(s, q + 1)) {
      q += 2;
      while (isDigit(s, q)) q++;
    }
    const e = zoneEnd(s, q);
    if (e >= 0) return e;
  }
  return zoneEnd(s, hm);
}

function zoneEnd(s: string, q: number): number {
  const c = s.charCodeAt(q);
  if ((c === 90 || c === 122) /* Z z */ && !isDigit(s, q + 1)) return q + 1;
  if ((c === 43 || c === 45) /* + - */ && twoDigits(s, q + 1, 0, 23)) {
    const h = q + 3;
    if (s.charCodeAt(h) === 58 && twoDigits(s, h + 1, 0, 59) && !isDigit(s, h + 3)) return h + 3;
    if (twoDigits(s, h, 0, 59) && !isDigit(s, h + 2)) return h + 2;
    if (!isDigit(s, h)) return h;
  }
  return isDigit(s, q) ? -1 : q;
}

/** End of a UUID (dashed 8-4-4-4-12 or 32 hex) at i, or -1. Caller checked the char before. */
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
  while (j < i + 32 && isHex(s, j)) j++;
  if (j < i + 32) return -1;
  return gluedAlnum(s, j) ? -1 : j;
}

/** End of 13 epoch-milli digits at i, or -1. Caller checked the char before is not hex. */
export function epochEnd(s: string, i: number): number {
  let j = i;
  while (j < i + 13 && isDigit(s, j)) j++;
  if (j < i + 13) return -1;
  return gluedHex(s, j) ? -1 : j;
}

/**
 * Apply roots, timestamps, UUIDs and epoch millis in one pass over
 * already whitespace-collapsed text. `trace`, when given, receives every match.
 */
export function scan(s: string, roots: RootMatcher, trace?: RuleMatch[]): string {
  // Hot loop: plain locals only (a closure capturing `i` would move it to the
  // heap and cost ~10x), and most characters leave after one table lookup.
  let out = "";
  let last = 0;
  let i = 0;
  const n = s.length;
  const tryRoots = !roots.empty;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      i++;
      continue;
    }
    const k = CLASS[c]!;
    if ((k & (SEP | ALNUM)) === 0) {
      i++;
      continue;
    }
    let end = -1;
    let rule = "";
    let token = "";
    if (tryRoots && ((k & SEP) !== 0 || s.charCodeAt(i + 1) === 58) && isBoundaryBefore(s, i)) {
      const m = roots.matchAt(s, i);
      if (m !== undefined) {
        end = m.end;
        rule = m.root.rule;
        token = m.root.token;
      }
    }
    if (end < 0 && (k & HEX) !== 0) {
      const p = i > 0 ? s.charCodeAt(i - 1) : 32;
      const pk = p < 128 ? CLASS[p]! : 0;
      if ((k & DIGIT) !== 0 && (pk & (DIGIT | BRACE)) === 0) {
        end = timestampEnd(s, i);
        rule = "timestamp";
        token = "{timestamp}";
      }
      if (end < 0 && (pk & (ALNUM | BRACE)) === 0) {
        end = uuidEnd(s, i);
        rule = "uuid";
        token = "{uuid}";
      }
      if (end < 0 && (k & DIGIT) !== 0 && (pk & (HEX | BRACE)) === 0) {
        end = epochEnd(s, i);
        rule = "epoch-millis";
        token = "{timestamp}";
      }
    }
    if (end < 0) {
      i++;
      // Skip the rest of the word: a letter right after an alphanumeric, or a
      // digit right after a digit, cannot start any match (every rule needs a
      // non-alphanumeric before a root or UUID, a non-digit before a
      // timestamp, a non-hex before epoch millis). Prose goes word by word.
      if ((k & ALNUM) !== 0) {
        while (i < n) {
          const d = s.charCodeAt(i);
          if (d >= 128) break;
          const dk = CLASS[d]!;
          if (
            (dk & LETTER) !== 0 ||
            ((dk & DIGIT) !== 0 && (CLASS[s.charCodeAt(i - 1)]! & DIGIT) !== 0)
          )
            i++;
          else break;
        }
      }
      continue;
    }
    if (trace !== undefined)
      trace.push({ rule, start: i, end, text: s.slice(i, end), replacement: token });
    out += s.slice(last, i) + token;
    last = end;
    i = end;
  }
  return last === 0 ? s : out + s.slice(last);
}
