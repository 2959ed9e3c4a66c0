/**
 * Which key-shape patterns can match a text, found in one native pass.
 *
 * Most prompts and responses hold one of the coarse anchors (`://` in any
 * URL is one), and then every pattern ran over the whole text: about 35
 * regex scans. Here each pattern's required literal (what every match of it
 * must contain: `sk-`, `ghp_`'s `gh`, `AccountKey`…) is read off its regex
 * source; one case-insensitive alternation of all literals finds where any
 * of them occurs, and only the patterns whose literal occurs are run. A
 * pattern whose source we cannot read a literal from is always run, so the
 * filter only ever skips a pattern that cannot match.
 */

/** A pattern's required literals: every match contains one of them (case-folded when `fold`). */
export interface RequiredLiterals {
  readonly any: readonly string[];
  readonly fold: boolean;
}

const META = new Set([..."[](){}|?*+.^$\\"]);
const QUANTIFIER = new Set([..."?*+{"]);

/** The literal at the start of a regex source (after lookbehinds and group opens), or undefined. */
export function requiredLiterals(re: RegExp): RequiredLiterals | undefined {
  const src = re.source;
  const fold = re.flags.includes("i");
  let i = 0;
  for (;;) {
    if (src.startsWith("(?<!", i) || src.startsWith("(?<=", i)) {
      const end = groupEnd(src, i);
      if (end < 0) return undefined;
      i = end;
    } else if (src[i] === "(" && src[i + 1] !== "?") i++;
    else break;
  }
  if (src.startsWith("(?:", i)) {
    const end = groupEnd(src, i);
    if (end < 0) return undefined;
    const alts = src.slice(i + 3, end - 1).split("|");
    if (alts.some((a) => a.length < 2 || [...a].some((c) => META.has(c)))) return undefined;
    if (QUANTIFIER.has(src[end] ?? "")) return undefined;
    return { any: alts, fold };
  }
  // One leading character class (`[Bb]earer`): the literal after it is still required.
  if (src[i] === "[") {
    const end = classEnd(src, i);
    if (end < 0 || QUANTIFIER.has(src[end] ?? "")) return undefined;
    i = end;
  }
  let lit = "";
  while (i < src.length) {
    let ch = src[i]!;
    let width = 1;
    if (ch === "\\") {
      const next = src[i + 1] ?? "";
      if (!/^[./\\-]$/.test(next)) break; // \s, \d…: a class, not a literal
      ch = next;
      width = 2;
    } else if (META.has(ch)) break;
    if (QUANTIFIER.has(src[i + width] ?? "")) break; // this character is optional or repeated
    lit += ch;
    i += width;
  }
  return lit.length >= 2 ? { any: [lit], fold } : undefined;
}

/** Index just past the group opening at `i` (classes and escapes skipped), or -1. */
function groupEnd(src: string, i: number): number {
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

/** Index just past the character class opening at `i`, or -1. */
function classEnd(src: string, i: number): number {
  for (let j = i + 1; j < src.length; j++) {
    if (src[j] === "\\") j++;
    else if (src[j] === "]") return j + 1;
  }
  return -1;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** A prepared filter for a list of patterns. */
export interface PatternFilter {
  /**
   * For each pattern (by index): may it match `text`? False only when its
   * required literal occurs nowhere in the text. `undefined` for a pattern
   * without a readable literal (the caller decides, as before).
   */
  candidates(text: string): (boolean | undefined)[];
}

/** Build the filter for `regexes` (one per pattern, in order). */
export function patternFilter(regexes: readonly RegExp[]): PatternFilter {
  const lits = regexes.map(requiredLiterals);
  // By first character, lower-cased: the literals a hit at a position can be.
  const byFirst = new Map<number, { pattern: number; text: string; fold: boolean }[]>();
  lits.forEach((l, pattern) => {
    for (const a of l?.any ?? []) {
      const text = l!.fold ? a.toLowerCase() : a;
      const first = text.toLowerCase().charCodeAt(0);
      const list = byFirst.get(first) ?? [];
      list.push({ pattern, text, fold: l!.fold });
      byFirst.set(first, list);
    }
  });
  const all = [...new Set(lits.flatMap((l) => (l === undefined ? [] : l.any)))];
  // Case-insensitive for all: it finds a superset of where each literal occurs.
  const finder = all.length === 0 ? undefined : new RegExp(all.map(escapeRe).join("|"), "gi");
  return {
    candidates(text) {
      const on: (boolean | undefined)[] = lits.map((l) => (l === undefined ? undefined : false));
      if (finder === undefined) return on;
      let left = on.filter((v) => v === false).length;
      finder.lastIndex = 0;
      for (let m = finder.exec(text); m !== null && left > 0; m = finder.exec(text)) {
        const at = m.index;
        // The alternation reports one literal per position: check every one that
        // starts with this character, and go on one character later (literals
        // overlap: `sk-` in `sk-ant-`).
        let c = text.charCodeAt(at);
        if (c >= 65 && c <= 90) c += 32;
        for (const l of byFirst.get(c) ?? []) {
          if (on[l.pattern] !== false) continue;
          const here = text.slice(at, at + l.text.length);
          if ((l.fold ? here.toLowerCase() : here) === l.text) {
            on[l.pattern] = true;
            left--;
          }
        }
        finder.lastIndex = at + 1;
      }
      return on;
    },
  };
}
