/**
 * The `whitespace` rule. Outside fenced code blocks every run of whitespace
 * becomes one space; inside them the line structure and indentation are the
 * program, so they are kept (two programs that differ only in indentation are
 * different questions). One linear pass; no regular expression with nested
 * quantifiers runs on the text.
 *
 * Fences are CommonMark's (spec section 4.5), with two deliberate
 * differences that keep the rule idempotent: any amount of leading
 * whitespace is allowed before a fence marker (CommonMark allows up to three
 * spaces), so that collapsing the text around a fence can never turn a
 * non-fence line into one; and fence lines lose trailing whitespace, line
 * endings become `\n`.
 */

// Whitespace that needs work: a run of two or more, or any single whitespace
// character that is not a plain space. Linear: no nested quantifier.
// Written as "a non-space whitespace and the rest of its run, or a space
// and at least one more" rather than `\s{2,}|[^\S ]`: the same matches (a
// run of two or more is taken whole by either branch, a lone character only
// when it is not a space), and each position's first character is classed
// once instead of once per branch (about 25 % less time on the bench
// prompt). test/normalize/fast-paths.test.ts compares the two.
const WS_TO_FIX = /[^\S ]\s*| \s+/g;

import { pushFencedBlock } from "./fenced-block.js";
import { fenceOpener } from "./fences.js";
import { Anchors } from "./whitespace-anchors.js";
import { pushCollapsed } from "./whitespace-runs.js";

export { closesFence, fenceOpener } from "./fences.js";

/** Only text containing a fence marker can hold a fenced block. */
const FENCE_HINT = /```|~~~/;

/**
 * Every whitespace run becomes one space; both ends trimmed. The rule's
 * statement in one regular expression: the rule itself gets the same result
 * from native searches ({@link pushCollapsed}), and the tests compare the
 * two.
 */
export function collapseRuns(s: string): string {
  const collapsed = s.replace(WS_TO_FIX, " ");
  return collapsed.length > 0 &&
    (collapsed.charCodeAt(0) === 32 || collapsed.charCodeAt(collapsed.length - 1) === 32)
    ? collapsed.trim()
    : collapsed;
}

/**
 * Apply the whitespace rule: fenced blocks kept line by line (trailing
 * whitespace dropped, `\n` line ends), each on its own lines; the text
 * between them collapsed to single spaces and trimmed. A fence that is never
 * closed runs to the end of the text, as in CommonMark.
 *
 * The output is built once, from pieces of the input joined at the end: the
 * parts between blocks and the blocks push slices (and the spaces and line
 * breaks that replace runs) onto one array. Building each part as its own
 * string and joining those cost a second full-size copy, and a copy of a
 * 100 KiB two-byte text is the largest single cost here.
 *
 * @example
 * collapseWhitespace("Fix:\n\n```py\nfor x in y:\n    f(x)\n```\n  thanks")
 * // "Fix:\n```py\nfor x in y:\n    f(x)\n```\nthanks"
 */
export function collapseWhitespace(s: string): string {
  const anchors = new Anchors(s);
  const out: string[] = [];
  const n = s.length;
  if (!FENCE_HINT.test(s)) {
    pushCollapsed(anchors, 0, n, "", out);
    return out.join("");
  }
  // Anchors first: only lines holding a fence marker can open a block, so
  // the text between blocks is found by searching for the markers; only the
  // lines of a block are walked one by one.
  let pos = 0; // start of the text not yet handled: always the start of a line
  while (pos <= n) {
    const opener = nextOpener(anchors, pos);
    const end = opener === undefined ? n : opener.start;
    pushCollapsed(anchors, pos, end, out.length > 0 ? "\n" : "", out);
    if (opener === undefined) break;
    if (out.length > 0) out.push("\n");
    pos = pushFencedBlock(anchors, opener.start, opener.fence, out);
  }
  // Only a block left open at the end can end in whitespace (its last lines empty).
  return out.join("").trimEnd();
}

/** Start of the line holding position i (lines are short: read back to the break). */
function lineStartOf(s: string, i: number): number {
  let j = i;
  while (j > 0) {
    const c = s.charCodeAt(j - 1);
    if (c === 10 || c === 13) break;
    j--;
  }
  return j;
}

const MARKER = /```|~~~/g;

/**
 * The first line at or after `from` (a line start) that opens a fence:
 * every opener holds a marker run of three, so only lines with a marker are
 * tried, each with {@link fenceOpener} itself.
 */
function nextOpener(
  anchors: Anchors,
  from: number,
): { start: number; fence: { char: number; length: number } } | undefined {
  const s = anchors.s;
  MARKER.lastIndex = from;
  while (MARKER.test(s)) {
    const at = MARKER.lastIndex - 3; // test(): no match object per marker
    const start = lineStartOf(s, at);
    const end = anchors.lineEnd(at);
    const fence = fenceOpener(s.slice(start, end));
    if (fence !== undefined) return { start, fence };
    MARKER.lastIndex = end; // no other marker on this line can open a fence
  }
  return undefined;
}
