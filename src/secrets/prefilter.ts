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
 *
 * The alternation costs a regex step at every character (its ~35 literals
 * start with common letters), so the literals of shapes that lie wholly
 * inside a long run of token characters (token-runs.ts: `sk-`, `ghp_`,
 * `AKIA`… followed by 20 or more random characters) are searched only in
 * those runs, found by reading every 20th character and joined by a space
 * (no such literal holds one); the few other literals are searched in the
 * whole text: the few exact-case ones (`Bearer`, `Basic`, `://`…) one
 * `indexOf` each, the case-folded ones (`password`, `AccountKey`…) one
 * short alternation.
 */
import { storedOrDerived } from "./derived.js";
import { MIN_TOKEN_RUNS, REQUIRED_LITERALS } from "./derived-tables.js";
import { nextLongRun } from "./long-runs.js";
import { classEnd, groupEnd, minTokenRun, TOKEN_RUN_MIN, TOKEN_TABLE } from "./token-runs.js";

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
  // One leading character class: the literal after it is still required. A
  // class of plain letters and digits (`[Bb]earer`) starts it: each of its
  // characters gives one alternative (`Bearer`, `bearer`), which a native
  // search finds far faster than `earer`, whose `e` is everywhere in prose.
  let heads = [""];
  if (src[i] === "[") {
    const end = classEnd(src, i);
    if (end < 0 || QUANTIFIER.has(src[end] ?? "")) return undefined;
    const body = src.slice(i + 1, end - 1);
    if (/^[A-Za-z0-9]{1,4}$/.test(body)) heads = [...body];
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
  return lit.length >= 2 ? { any: heads.map((h) => h + lit), fold } : undefined;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** A prepared filter for a list of patterns. */
export interface PatternFilter {
  /**
   * For each pattern (by index): may it match `text`? False only when its
   * required literal occurs nowhere in the text. `undefined` for a pattern
   * without a readable literal (the caller decides, as before).
   * `tokenRuns`, when given, holds what `longTokenRuns(text, text.length >>> 1)`
   * returns, found by the caller (shared-runs.ts finds it beside the base64 runs).
   */
  candidates(text: string, tokenRuns?: { tokenText: string | undefined }): (boolean | undefined)[];
}

/** Build the filter for `regexes` (one per pattern, in order). */
export function patternFilter(regexes: readonly RegExp[]): PatternFilter {
  // The built-in regexes' literals and run lengths are read from derived-tables.ts (derived.ts).
  const lits = regexes.map((re) => storedOrDerived(REQUIRED_LITERALS, re, requiredLiterals));
  const inRun = regexes.map(
    (re) => (storedOrDerived(MIN_TOKEN_RUNS, re, minTokenRun) ?? 0) >= TOKEN_RUN_MIN,
  );
  const whole = literalSearch(lits.map((l, p) => (inRun[p] ? undefined : l)));
  const runs = literalSearch(lits.map((l, p) => (inRun[p] ? l : undefined)));
  let all: PatternFilter | undefined; // only mostly-one-token texts use it: built on the first
  const anyInRun = inRun.includes(true);
  return {
    candidates(text, tokenRuns) {
      // Text that is mostly one long token (a base64 blob) gains nothing from the
      // split: the in-run literals would be searched in nearly all of it anyway.
      const runText = !anyInRun
        ? ""
        : tokenRuns !== undefined
          ? tokenRuns.tokenText
          : longTokenRuns(text, text.length >>> 1);
      if (runText === undefined) {
        all ??= literalSearch(lits);
        return all.candidates(text);
      }
      const onWhole = whole.candidates(text);
      if (!anyInRun) return onWhole;
      const onRuns = runs.candidates(runText);
      return lits.map((l, p) => (l === undefined ? undefined : inRun[p] ? onRuns[p] : onWhole[p]));
    },
  };
}

/**
 * The runs of {@link TOKEN_RUN_MIN} or more token characters in `text`,
 * joined by a space; undefined as soon as they hold more than `limit`
 * characters.
 *
 * @example
 * longTokenRuns(`key ${"k".repeat(20)} and ${"v".repeat(21)}`, 100) // "kkk…k vvv…v"
 */
export function longTokenRuns(text: string, limit = text.length): string | undefined {
  const parts: string[] = [];
  let total = 0;
  let from = 0;
  for (;;) {
    const r = nextLongRun(text, from, TOKEN_TABLE, TOKEN_RUN_MIN);
    if (r === undefined) break;
    total += r.end - r.start;
    if (total > limit) return undefined;
    parts.push(text.slice(r.start, r.end));
    from = r.end;
  }
  return parts.join(" ");
}

/**
 * Up to this many exact-case literals are searched one `indexOf` each, not
 * by one alternation: V8's `indexOf` skips to the literal's first character
 * (rare for `Bearer`, `Basic`, `ATATT3`), while the alternation takes a
 * regex step at every character. Measured on the 100 KiB bench prompt:
 * the six whole-text literals cost ~70 µs by `indexOf`, ~110 µs as one
 * alternation. Many literals (the ~30 in-run ones) stay one alternation.
 */
const FEW_LITERALS = 8;

const probes = new Map<string, string | undefined>();

/**
 * A part of an exact-case literal that is searched first, because the
 * literal cannot occur where it does not: its longest run of letters and
 * digits, when that is at least 3 long and shorter than the literal. Why:
 * V8 searches a literal by its first character, or from its last for a
 * long one, and `-----BEGIN ` has a common character at both ends (`-` in
 * every flag and date, the space after every word): 41 µs on the 100 KiB
 * bench prompt, against 3 µs for `BEGIN`, which does not occur there.
 *
 * @example
 * probeOf("-----BEGIN ") // "BEGIN"
 * probeOf("Bearer") // undefined: the literal itself
 */
export function probeOf(lit: string): string | undefined {
  let probe = probes.get(lit);
  if (probe === undefined && !probes.has(lit)) {
    const longest = (lit.match(/[A-Za-z0-9]+/g) ?? []).reduce(
      (a, b) => (b.length > a.length ? b : a),
      "",
    );
    probe = longest.length >= 3 && longest.length < lit.length ? longest : undefined;
    probes.set(lit, probe);
  }
  return probe;
}

/** Where the given literals occur (patterns without one: undefined), one native search at a time. */
function literalSearch(lits: readonly (RequiredLiterals | undefined)[]): PatternFilter {
  // Literals by case rule (exact, or folded for `i` patterns), each with the patterns needing it.
  const groups = [false, true].map((fold) => {
    const patternsOf = new Map<string, number[]>();
    lits.forEach((l, p) => {
      if (l === undefined || l.fold !== fold) return;
      for (const a of l.any) {
        const key = fold ? a.toLowerCase() : a;
        patternsOf.set(key, [...(patternsOf.get(key) ?? []), p]);
      }
    });
    // Compiled on first use: the few exact-case literals never need it (see below).
    return {
      fold,
      patternsOf,
      full: undefined as RegExp | undefined,
      finders: new Map<string, RegExp>(),
    };
  });
  const fullOf = (g: (typeof groups)[number]): RegExp =>
    (g.full ??= new RegExp([...g.patternsOf.keys()].map(escapeRe).join("|"), g.fold ? "gi" : "g"));
  return {
    candidates(text) {
      const on: (boolean | undefined)[] = lits.map((l) => (l === undefined ? undefined : false));
      for (const g of groups) {
        if (g.patternsOf.size === 0) continue;
        if (!g.fold && g.patternsOf.size <= FEW_LITERALS) {
          for (const [lit, ps] of g.patternsOf) {
            const probe = probeOf(lit);
            if (probe !== undefined && !text.includes(probe)) continue;
            if (text.includes(lit)) for (const p of ps) on[p] = true;
          }
          continue;
        }
        const full = fullOf(g);
        full.lastIndex = 0;
        const first = full.exec(text);
        if (first === null) continue; // the common case: one native pass, nothing found
        // Search for the literals not found yet; each hit finds at least one more,
        // so there are at most as many searches as literals, each resuming where
        // the last hit was: one pass over the text in all.
        const left = new Set(g.patternsOf.keys());
        let pos = first.index;
        while (left.size > 0) {
          const finder = finderFor(g, left);
          finder.lastIndex = pos;
          const m = finder.exec(text);
          if (m === null) break;
          pos = m.index;
          for (const lit of [...left]) {
            const here = text.slice(pos, pos + lit.length);
            if ((g.fold ? here.toLowerCase() : here) !== lit) continue;
            left.delete(lit);
            for (const p of g.patternsOf.get(lit)!) on[p] = true;
          }
        }
      }
      return on;
    },
  };
}

const MAX_FINDERS = 256;

/** The alternation of `left`, compiled once per set of literals. */
function finderFor(g: { fold: boolean; finders: Map<string, RegExp> }, left: Set<string>): RegExp {
  const key = [...left].join("\u0000");
  let re = g.finders.get(key);
  if (re === undefined) {
    re = new RegExp([...left].map(escapeRe).join("|"), g.fold ? "gi" : "g");
    if (g.finders.size >= MAX_FINDERS) g.finders.clear();
    g.finders.set(key, re);
  }
  return re;
}
