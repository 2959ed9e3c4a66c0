/**
 * The long runs the secret rule reads a text for, found in one sampled
 * pass instead of two.
 *
 * A scan of one text looks for two kinds of long run: the literal
 * prefilter's token runs (20+ of `[A-Za-z0-9_.-]`, token-runs.ts) and the
 * base64 runs that are decoded and scanned again (20+ of
 * `[A-Za-z0-9+/_=-]`, redact.ts). Both classes lie inside their union
 * `[A-Za-z0-9_.+/=-]`, so every run of either, 20 or more long, lies inside
 * a maximal union run of 20 or more: one sampled pass over the text
 * (long-runs.ts) finds those, and each kind is then searched for only
 * inside them, bounded to them. On prose the sampled pass costs about what
 * one of the two did (the union's runs are few: paths, hashes, JSON keys
 * with dots), and the searches inside the runs read a few characters each.
 *
 * Same runs as the two separate searches: a maximal run of either class is
 * bounded by characters outside that class; where such a bound is also
 * outside the union (the union run's ends), the bounded search stops there
 * too, and inside the union run the search is the same search.
 * test/secrets/shared-runs.test.ts checks both lists against the separate
 * searches.
 */
import { nextLongRun } from "./long-runs.js";
import { TOKEN_RUN_MIN, TOKEN_TABLE } from "./token-runs.js";

/** What one pass found: the token runs as the prefilter takes them, and the base64 runs. */
export interface SharedRuns {
  /**
   * The token runs of {@link TOKEN_RUN_MIN} or more, joined by a space
   * (as `longTokenRuns` gives them); undefined when they hold more than
   * the limit given.
   */
  tokenText: string | undefined;
  /** The maximal base64 runs of `base64Min` or more, as start, end pairs in order. */
  base64: number[];
}

/** Per ASCII character: 0 outside both classes, else BOTH, or TOKEN_ONLY, or BASE64_ONLY. */
const BOTH = 1;
const TOKEN_ONLY = 2;
const BASE64_ONLY = 3;

function kindsOf(token: Uint8Array, base64: Uint8Array): Uint8Array {
  const t = new Uint8Array(128);
  for (let c = 0; c < 128; c++) {
    const a = token[c] === 1;
    const b = base64[c] === 1;
    t[c] = a && b ? BOTH : a ? TOKEN_ONLY : b ? BASE64_ONLY : 0;
  }
  return t;
}

/** The union table and the kinds, for the last base64 table asked with (there is one). */
let cached: { base64: Uint8Array; union: Uint8Array; kinds: Uint8Array } | undefined;

/**
 * The token runs and the base64 runs (characters of `base64Table`, at
 * least `base64Min` long) of `text`, from one sampled pass over their
 * union. Inside a union run every character is read once, in one loop that
 * ends both kinds of run where they end (a `.` ends a base64 run, a `+`,
 * `/` or `=` a token run): the union runs are short, and two bounded
 * searches per run cost more than the one read.
 *
 * @example
 * sharedRuns(`see ${"a".repeat(20)}/b`, BASE64_TABLE, 20, 100)
 * // { tokenText: "aaaaaaaaaaaaaaaaaaaa", base64: [4, 26] }
 */
export function sharedRuns(
  text: string,
  base64Table: Uint8Array,
  base64Min: number,
  tokenLimit: number,
): SharedRuns {
  if (cached?.base64 !== base64Table) {
    const kinds = kindsOf(TOKEN_TABLE, base64Table);
    cached = { base64: base64Table, union: kinds.map((k) => (k === 0 ? 0 : 1)), kinds };
  }
  const { union, kinds } = cached;
  const tokenMin = TOKEN_RUN_MIN;
  const min = Math.min(tokenMin, base64Min);
  const parts: string[] = [];
  const base64: number[] = [];
  let total = 0; // once past the limit, the runs are only counted: the text is not wanted
  for (let u = nextLongRun(text, 0, union, min); u !== undefined; ) {
    const end = u.end;
    // Every character of [u.start, end) is in the union: one of the three kinds.
    let tokenFrom = u.start;
    let base64From = u.start;
    for (let i = u.start; i < end; i++) {
      const k = kinds[text.charCodeAt(i)];
      if (k === BOTH) continue;
      if (k === BASE64_ONLY) {
        if (i - tokenFrom >= tokenMin) {
          total += i - tokenFrom;
          if (total <= tokenLimit) parts.push(text.slice(tokenFrom, i));
        }
        tokenFrom = i + 1;
      } else {
        if (i - base64From >= base64Min) base64.push(base64From, i);
        base64From = i + 1;
      }
    }
    if (end - tokenFrom >= tokenMin) {
      total += end - tokenFrom;
      if (total <= tokenLimit) parts.push(text.slice(tokenFrom, end));
    }
    if (end - base64From >= base64Min) base64.push(base64From, end);
    u = nextLongRun(text, end, union, min);
  }
  return { tokenText: total > tokenLimit ? undefined : parts.join(" "), base64 };
}
