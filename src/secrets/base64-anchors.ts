/**
 * Can the base64 decoding of a run hold a key-shape anchor? Answered from
 * the decoded bytes as they are computed, without building the decoded
 * string.
 *
 * Why: the scanner decodes every run of 20+ base64 characters to look for
 * a key shape hidden under base64 (redact.ts). In a prompt every file path
 * (`/home/dev/work/acme-agent/src/recorder/recorder`) and every hex sha is
 * such a run, so that was hundreds of `Buffer.from(run, "base64")` and
 * latin1 strings per 100 KiB, each tested against {@link SECRET_ANCHORS}
 * and almost always dropped: the largest share of the secret rule.
 *
 * What makes skipping exact: a decoded text shorter than the prefilter's
 * threshold runs its patterns only when {@link SECRET_ANCHORS} matches it.
 * A match of that regex starts with two characters, the first allowed by
 * the first atom of one of its alternatives and the second by that
 * alternative's second atom. The table of such pairs is read off the
 * regex's own source (not written by hand, so it follows the anchors when
 * they change) and tested over all 256 latin1 characters with the regex's
 * own flags (so `i` folds exactly as the regex folds). A run whose decoded
 * bytes hold no such pair cannot hold an anchor; all others take the exact
 * path as before.
 *
 * The decoder reads the bytes Node's does: both alphabets (`+/` and `-_`)
 * in one run, 4 characters to 3 bytes, a trailing 2 or 3 characters to 1 or
 * 2 bytes, a trailing single character to none. Node stops at the first
 * `=` (padding, or a `key=value` inside a run): the bytes before it are a
 * prefix of what the decoder reads with every `=` dropped, and a decoder
 * that skipped `=` and went on would read exactly that, so dropping `=`
 * answers for both. Any other character makes the answer "may hold".
 * test/secrets/base64-anchors.test.ts checks the decoder against Buffer and
 * the answer against the regex, on runs with and without `=`.
 */
import { regexKey } from "./derived.js";
import { START_PAIRS, type StartPairGroups } from "./derived-tables.js";
import { SECRET_ANCHORS } from "./patterns.js";
import { classEnd } from "./token-runs.js";

/** 6-bit value of each ASCII base64 character (both alphabets), -1 for any other. */
const SEXTET: Int8Array = (() => {
  const t = new Int8Array(128).fill(-1);
  const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let v = 0; v < 64; v++) t[std.charCodeAt(v)] = v;
  t[45] = 62; // `-`, URL-safe for `+`
  t[95] = 63; // `_`, URL-safe for `/`
  return t;
})();

const QUANTIFIER = new Set([..."?*+{"]);
/** Characters that start something other than a one-character atom. */
const NOT_AN_ATOM = new Set([..."()|.^$?*+{}"]);

/** Split a regex source at its top-level `|` (outside groups and classes). */
function alternatives(src: string): string[] | undefined {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") i++;
    else if (c === "[") {
      const end = classEnd(src, i);
      if (end < 0) return undefined;
      i = end - 1;
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) {
      out.push(src.slice(start, i));
      start = i + 1;
    }
  }
  out.push(src.slice(start));
  return out;
}

/**
 * The first two atoms of an alternative, each matching exactly one
 * character: a plain character, an escaped punctuation character (`\/`,
 * `\.`) or a character class. Undefined for anything else (a group, a
 * quantifier on either, an assertion, a class escape such as `\s` or `\b`).
 */
function firstTwoAtoms(alt: string): [string, string] | undefined {
  const atoms: string[] = [];
  let i = 0;
  while (atoms.length < 2) {
    const c = alt[i];
    if (c === undefined) return undefined;
    let end: number;
    if (c === "[") end = classEnd(alt, i);
    else if (c === "\\") end = /^[^A-Za-z0-9]$/.test(alt[i + 1] ?? "") ? i + 2 : -1;
    else end = NOT_AN_ATOM.has(c) ? -1 : i + 1;
    if (end < 0 || QUANTIFIER.has(alt[end] ?? "")) return undefined;
    atoms.push(alt.slice(i, end));
    i = end;
  }
  return [atoms[0]!, atoms[1]!];
}

/**
 * `table[a * 256 + b] === 1` when some match of `re` may start with the
 * latin1 characters `a`, `b`; undefined when `re`'s source cannot be read
 * that way (then nothing may be skipped).
 */
export function startPairs(re: RegExp): Uint8Array | undefined {
  const alts = alternatives(re.source);
  if (alts === undefined) return undefined;
  const flags = `${re.flags.replace(/[gy]/g, "")}g`;
  const table = new Uint8Array(65536);
  // Each atom matches exactly one character, so one global search over the
  // 256 latin1 characters in a row finds the same ones as a test of each
  // alone; atoms repeat across alternatives (`s`, `k`…), so each is searched
  // once. ~70 regex compilations: the scanner reads the anchors' table from
  // derived-tables.ts instead, and derives it here only if the anchors changed
  // since that file was generated. LATIN1: character c at index c.
  const LATIN1 = String.fromCharCode(...Array.from({ length: 256 }, (_, c) => c));
  const charsOf = new Map<string, number[]>();
  const chars = (atom: string): number[] => {
    let cs = charsOf.get(atom);
    if (cs === undefined) {
      cs = [];
      const one = new RegExp(`(?:${atom})`, flags);
      for (let m = one.exec(LATIN1); m !== null; m = one.exec(LATIN1)) cs.push(m.index);
      charsOf.set(atom, cs);
    }
    return cs;
  };
  for (const alt of alts) {
    const atoms = firstTwoAtoms(alt);
    if (atoms === undefined) return undefined;
    for (const a of chars(atoms[0])) for (const b of chars(atoms[1])) table[a * 256 + b] = 1;
  }
  return table;
}

/** The table of {@link SECRET_ANCHORS}, built on first use (null: not built yet). */
let anchorPairs: Uint8Array | undefined | null = null;

/**
 * False only when the base64 decoding of `text[start, end)` (as
 * `Buffer.from(run, "base64")` decodes it) holds no two adjacent bytes that
 * can start a {@link SECRET_ANCHORS} match, so the decoded text cannot
 * match it.
 *
 * @example
 * decodedMayHoldAnchor("/home/dev/work/acme-agent/src", 0, 29) // false
 * decodedMayHoldAnchor("dXNlcjpzay1wcm9qLWExQjJj", 0, 24) // true: "user:sk-proj-…" holds `sk-`
 */
export function decodedMayHoldAnchor(text: string, start: number, end: number): boolean {
  if (anchorPairs === null) {
    // Read from derived-tables.ts (derived.ts); derived here only when the anchors changed since.
    const groups = START_PAIRS[regexKey(SECRET_ANCHORS)];
    anchorPairs = groups === undefined ? startPairs(SECRET_ANCHORS) : tableOfGroups(groups);
  }
  return anchorPairs === undefined || decodedHoldsPair(text, start, end, anchorPairs);
}

/**
 * The start-pair table of `groups` (the form derived-tables.ts stores one
 * in; null there: {@link startPairs} gave undefined).
 *
 * @example
 * tableOfGroups([["ab", "c"]])[0x61 * 256 + 0x63] // 1: "ac"
 */
export function tableOfGroups(groups: StartPairGroups | null): Uint8Array | undefined {
  if (groups === null) return undefined;
  const table = new Uint8Array(65536);
  for (const [firsts, seconds] of groups) {
    for (let i = 0; i < firsts.length; i++) {
      const row = firsts.charCodeAt(i) * 256;
      for (let j = 0; j < seconds.length; j++) table[row + seconds.charCodeAt(j)] = 1;
    }
  }
  return table;
}

/**
 * Do two adjacent bytes `a`, `b` of the base64 decoding of
 * `text[start, end)` have `pairs[a * 256 + b] === 1`? True as well for a
 * run holding a character outside both alphabets (`=` is dropped: see
 * above).
 */
export function decodedHoldsPair(
  text: string,
  start: number,
  end: number,
  pairs: Uint8Array,
): boolean {
  let acc = 0; // the undecoded bits, the newest lowest
  let bits = 0;
  let prev = -1; // the previous decoded byte
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 61) continue; // `=`: see above
    const v = c < 128 ? SEXTET[c]! : -1;
    if (v < 0) return true;
    acc = ((acc << 6) | v) & 0xfff; // at most 12 bits are ever pending
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      const byte = (acc >>> bits) & 0xff;
      if (prev >= 0 && pairs[(prev << 8) | byte] === 1) return true;
      prev = byte;
    }
  }
  return false;
}
