/**
 * Finds root spellings at a position with two tries (exact for POSIX roots,
 * ASCII-case-folded for Windows roots). A walk costs at most the length of
 * the longest spelling, so the whole scan stays linear in the text for a fixed
 * set of roots, where one regex alternation would retry every spelling at
 * every slash.
 */
import { asciiLower, type RootSpelling } from "./roots.js";

interface TrieNode {
  next: Map<number, TrieNode>;
  /** The spelling ending here, if any (the first inserted wins: longest-first, then priority). */
  end: RootSpelling | undefined;
}

const node = (): TrieNode => ({ next: new Map(), end: undefined });

/** A compiled set of root spellings. */
export interface RootMatcher {
  /** True when there are no roots at all (nothing to look for). */
  readonly empty: boolean;
  /**
   * How spellings start, for the scanner's anchors: `sep` when all start
   * with `/` or `\\`, `drive` when some start with a drive letter and `:`,
   * `any` otherwise (the scanner then tries every ASCII letter and digit).
   */
  readonly starts: "sep" | "drive" | "any";
  /**
   * The longest spelling found at `start` whose end lies on a path boundary,
   * or undefined. The caller checks the boundary before `start`.
   */
  matchAt(text: string, start: number): { root: RootSpelling; end: number } | undefined;
}

const matcherCache = new WeakMap<readonly RootSpelling[], RootMatcher>();

/** Compile (and cache, per spelling list) a matcher. */
export function compileRoots(spellings: readonly RootSpelling[]): RootMatcher {
  const cached = matcherCache.get(spellings);
  if (cached !== undefined) return cached;
  const exact = node();
  const folded = node();
  for (const r of spellings) {
    let n = r.caseInsensitive ? folded : exact;
    const text = r.caseInsensitive ? asciiLower(r.text) : r.text;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      let child = n.next.get(c);
      if (child === undefined) {
        child = node();
        n.next.set(c, child);
      }
      n = child;
    }
    n.end ??= r;
  }
  const matcher: RootMatcher = {
    empty: spellings.length === 0,
    starts: startsOf(spellings),
    matchAt(text, start) {
      const a = walk(exact, text, start, false);
      const b = walk(folded, text, start, true);
      if (a === undefined) return b;
      if (b === undefined) return a;
      return b.end > a.end || (b.end === a.end && b.root.priority < a.root.priority) ? b : a;
    },
  };
  matcherCache.set(spellings, matcher);
  return matcher;
}

function startsOf(spellings: readonly RootSpelling[]): "sep" | "drive" | "any" {
  let starts: "sep" | "drive" | "any" = "sep";
  for (const r of spellings) {
    const c = r.text.charCodeAt(0);
    if (c < 128 && (CLASS[c]! & SEP) !== 0) continue;
    if (c < 128 && (CLASS[c]! & LETTER) !== 0 && r.text.charCodeAt(1) === 58) starts = "drive";
    else return "any";
  }
  return starts;
}

function walk(
  root: TrieNode,
  text: string,
  start: number,
  fold: boolean,
): { root: RootSpelling; end: number } | undefined {
  let best: { root: RootSpelling; end: number } | undefined;
  let n: TrieNode | undefined = root;
  let i = start;
  while (i < text.length) {
    let c = text.charCodeAt(i);
    if (fold && c >= 65 && c <= 90) c += 32;
    n = n.next.get(c);
    if (n === undefined) break;
    i++;
    if (n.end !== undefined && isBoundaryAfter(text, i)) best = { root: n.end, end: i };
  }
  return best;
}

/** Character classes, one bit each, for the ASCII range. */
export const NAME = 1; // continues a path component: [A-Za-z0-9_.~+@{}-]
export const HEX = 2;
export const DIGIT = 4;
export const ALNUM = 8;
export const SEP = 16; // / or \
/**
 * `{` and `}`: no rule fires directly next to a brace. Replacement tokens are
 * braced (`{home}`), so this is what makes normalization idempotent: text
 * that was glued to a match in the input (`/home/u/home/u`) stays glued to the
 * token in the output and is not matched on a second pass.
 */
export const BRACE = 32;
export const LETTER = 64; // A-Za-z
export const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  let k = 0;
  if (/[A-Za-z0-9_.~+@{}-]/.test(ch)) k |= NAME;
  if (ch === "{" || ch === "}") k |= BRACE;
  if (/[A-Za-z]/.test(ch)) k |= LETTER;
  if (/[0-9A-Fa-f]/.test(ch)) k |= HEX;
  if (/[0-9]/.test(ch)) k |= DIGIT;
  if (/[0-9A-Za-z]/.test(ch)) k |= ALNUM;
  if (ch === "/" || ch === "\\") k |= SEP;
  CLASS[c] = k;
}

/** Any non-ASCII character continues a path name: when in doubt, keep the text. */
function isName(c: number): boolean {
  return c >= 128 || (CLASS[c]! & NAME) !== 0;
}

/**
 * A root may end here: at the end, before a separator, before a character
 * that cannot continue a name, or before a sentence-ending `.` (`in /home/u.`)
 * but not a name that continues with a dot (`/home/u.bak`, `/home/u./x`).
 */
export function isBoundaryAfter(text: string, i: number): boolean {
  if (i >= text.length) return true;
  const c = text.charCodeAt(i);
  if (c < 128 && (CLASS[c]! & SEP) !== 0) return true;
  if (c === 46 /* . */) {
    if (i + 1 >= text.length) return true;
    const d = text.charCodeAt(i + 1);
    return !isName(d) && !(d < 128 && (CLASS[d]! & SEP) !== 0);
  }
  return !isName(c);
}

/**
 * A root may start here: at the start, or after a character that is neither
 * part of a name nor a separator, or right after `://` or `:///` (file URLs).
 */
export function isBoundaryBefore(text: string, i: number): boolean {
  if (i === 0) return true;
  const p = text.charCodeAt(i - 1);
  if (p < 128 && (CLASS[p]! & SEP) !== 0) {
    return (i >= 3 && text.startsWith("://", i - 3)) || (i >= 4 && text.startsWith(":///", i - 4));
  }
  return !isName(p);
}
