/**
 * Which key shapes lie wholly inside a long run of token characters, read
 * off their regex source.
 *
 * Most shapes are a prefix and a long random tail (`sk-` and 20+ of
 * `[A-Za-z0-9_-]`): every character of every match is a letter, digit or
 * one of `_.-`, and the match is at least 20 long. Such a match lies
 * inside a maximal run of those characters of 20 or more, and runs that
 * long are rare in prose and found by reading every 20th character
 * (long-runs.ts). So the literal prefilter (prefilter.ts) need only look
 * for those shapes' literals inside the long runs, and for the few other
 * shapes (`Bearer `, `://`, `-----BEGIN `, `xox`, `ATATT3`, the `key=` forms) in
 * the whole text. The analysis below is conservative: a source it cannot
 * read (a capturing group, `.`, `\s`, a top-level `|`) is "not in a run",
 * and that pattern's literal is searched in the whole text as before.
 */
import { classTableOf } from "./class-table.js";

/**
 * The token characters: letters, digits, `_`, `-` and `.` (JWTs, `ya29.`).
 * Not `/`, `+` or `=`: paths and `key=value` pairs then break into short
 * runs, and the one shape whose tail holds `=` (Atlassian) is searched in
 * the whole text.
 */
export const TOKEN_CHAR = /[A-Za-z0-9_.-]/;

/** The shortest run the prefilter looks in (the shortest in-run shape: AWS key ids, 20). */
export const TOKEN_RUN_MIN = 20;

/** `table[c] === 1` for the ASCII token characters (for nextLongRun). */
export const TOKEN_TABLE: Uint8Array = classTableOf(TOKEN_CHAR);

/**
 * Does the class source match only token characters, under `flags`? Only a
 * plain class is read: not negated, ASCII only, escapes of punctuation
 * only (no `\\s`, `\\w`, `\\u…`). Such a class matches no non-ASCII
 * character, even under `i`: a non-Unicode regex never folds a non-ASCII
 * character onto an ASCII one (ECMAScript Canonicalize). So the 128 ASCII
 * characters decide it.
 */
function tokenOnly(cls: string, flags: string): boolean {
  if (cls.startsWith("[^") || /[^\x20-\x7e]|\\[A-Za-z0-9]/.test(cls)) return false;
  const re = new RegExp(cls, flags.replace(/[gy]/g, ""));
  for (let c = 0; c < 128; c++) {
    const ch = String.fromCharCode(c);
    if (re.test(ch) && !TOKEN_CHAR.test(ch)) return false;
  }
  return true;
}

/** A character that stands for itself in a regex source and is a token character. */
const literalToken = (c: string): boolean => /^[A-Za-z0-9_-]$/.test(c) && TOKEN_CHAR.test(c);

/** Index just past the character class opening at `i` in a regex source, or -1. */
export function classEnd(src: string, i: number): number {
  for (let j = i + 1; j < src.length; j++) {
    if (src[j] === "\\") j++;
    else if (src[j] === "]") return j + 1;
  }
  return -1;
}

/** Index just past the group opening at `i` in a regex source (classes and escapes skipped), or -1. */
export function groupEnd(src: string, i: number): number {
  let depth = 0;
  for (let j = i; j < src.length; j++) {
    const c = src[j];
    if (c === "\\") j++;
    else if (c === "[") {
      const e = classEnd(src, j);
      if (e < 0) return -1;
      j = e - 1;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return j + 1;
  }
  return -1;
}

/** Index just past the group or class opening at `i`, or -1. */
const closeOf = (src: string, i: number): number =>
  src[i] === "[" ? classEnd(src, i) : groupEnd(src, i);

/**
 * The least number of characters a match of `re` consumes when every
 * character it can consume is a token character; undefined when the
 * source holds anything else (or anything this reader does not know).
 * Lookarounds consume nothing and are skipped.
 *
 * @example
 * minTokenRun(/(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,4096}/g) // 23
 * minTokenRun(/([Bb]earer[ \t]{1,4})([A-Za-z0-9._~+/-]{16,4096})/g) // undefined
 */
export function minTokenRun(re: RegExp): number | undefined {
  // Unicode mode folds non-ASCII characters onto ASCII ones under `i` (ſ, K):
  // not read here.
  if (re.unicode || re.flags.includes("v")) return undefined;
  const src = re.source;
  let total = 0;
  let i = 0;
  while (i < src.length) {
    let atomMin: number;
    let next: number;
    if (/^\(\?<?[=!]/.test(src.slice(i, i + 4))) {
      const end = closeOf(src, i);
      if (end < 0) return undefined;
      i = end; // a lookaround: zero width, and no quantifier may follow one here
      continue;
    }
    const c = src[i]!;
    if (c === "(") {
      // Only a non-capturing group of plain literal alternatives.
      if (!src.startsWith("(?:", i)) return undefined;
      const end = closeOf(src, i);
      if (end < 0) return undefined;
      const alts = src.slice(i + 3, end - 1).split("|");
      for (const a of alts) {
        if (a === "" || ![...a].every(literalToken)) return undefined;
      }
      atomMin = Math.min(...alts.map((a) => a.length));
      next = end;
    } else if (c === "[") {
      const end = closeOf(src, i);
      if (end < 0 || !tokenOnly(src.slice(i, end), re.flags)) return undefined;
      atomMin = 1;
      next = end;
    } else if (c === "\\") {
      const e = src[i + 1] ?? "";
      // An escaped token punctuation character (`\.`, `\-`); \s, \d, \b…: not read here.
      if (!/^[^A-Za-z0-9]$/.test(e) || !TOKEN_CHAR.test(e)) return undefined;
      atomMin = 1;
      next = i + 2;
    } else if (literalToken(c)) {
      atomMin = 1;
      next = i + 1;
    } else return undefined; // `.`, `|`, `^`, `$`, a space…
    // The quantifier, if any: only its lower bound counts.
    const q = /^(?:\{(\d+)(?:,\d*)?\}|[?*+])\??/.exec(src.slice(next));
    if (q !== null) {
      const times = q[0][0] === "{" ? Number(q[1]) : q[0][0] === "+" ? 1 : 0;
      atomMin *= times;
      next += q[0].length;
    }
    total += atomMin;
    i = next;
  }
  return total;
}
