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

/** Only text containing a fence marker needs the line-by-line pass. */
const FENCE_HINT = /```|~~~/;

/** Every whitespace run becomes one space; both ends trimmed. */
export function collapseRuns(s: string): string {
  const collapsed = s.replace(WS_TO_FIX, " ");
  return collapsed.length > 0 &&
    (collapsed.charCodeAt(0) === 32 || collapsed.charCodeAt(collapsed.length - 1) === 32)
    ? collapsed.trim()
    : collapsed;
}

const isWs = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || (c > 127 && /\s/.test(String.fromCharCode(c)));

/** The opening fence on this line: its marker character and length, or undefined. */
export function fenceOpener(line: string): { char: number; length: number } | undefined {
  let i = 0;
  while (i < line.length && isWs(line.charCodeAt(i))) i++;
  const char = line.charCodeAt(i);
  if (char !== 96 /* ` */ && char !== 126 /* ~ */) return undefined;
  let j = i;
  while (line.charCodeAt(j) === char) j++;
  if (j - i < 3) return undefined;
  // A backtick fence's info string cannot contain a backtick (inline code).
  if (char === 96 && line.indexOf("`", j) >= 0) return undefined;
  return { char, length: j - i };
}

/** Does this line close a fence opened with `open`? Same character, at least as long, nothing after. */
export function closesFence(line: string, open: { char: number; length: number }): boolean {
  let i = 0;
  while (i < line.length && isWs(line.charCodeAt(i))) i++;
  let j = i;
  while (line.charCodeAt(j) === open.char) j++;
  if (j - i < open.length) return false;
  while (j < line.length && isWs(line.charCodeAt(j))) j++;
  return j === line.length;
}

/**
 * Apply the whitespace rule: fenced blocks kept line by line (trailing
 * whitespace dropped, `\n` line ends), each on its own lines; the text
 * between them collapsed to single spaces and trimmed. A fence that is never
 * closed runs to the end of the text, as in CommonMark.
 *
 * @example
 * collapseWhitespace("Fix:\n\n```py\nfor x in y:\n    f(x)\n```\n  thanks")
 * // "Fix:\n```py\nfor x in y:\n    f(x)\n```\nthanks"
 */
export function collapseWhitespace(s: string): string {
  if (!FENCE_HINT.test(s)) return collapseRuns(s);
  // Anchors first: only lines holding a fence marker can open a block, so
  // the text between blocks is found by searching for the markers and
  // collapsed in one native pass (a line break is whitespace like any
  // other); only the lines of a block are walked one by one.
  const parts: string[] = [];
  const n = s.length;
  const noCR = s.indexOf("\r") < 0;
  let pos = 0; // start of the text not yet handled: always the start of a line
  while (pos <= n) {
    const opener = nextOpener(s, pos, noCR);
    const outside = collapseRuns(s.slice(pos, opener === undefined ? n : opener.start));
    if (outside !== "") parts.push(outside);
    if (opener === undefined) break;
    // The block: the opener line, then every line up to the closing one (or the end).
    const block: string[] = [];
    let lineStart = opener.start;
    const open = opener.fence;
    for (;;) {
      const e = lineEnd(s, lineStart, noCR);
      const line = s.slice(lineStart, e);
      block.push(line.trimEnd());
      const closed = block.length > 1 && closesFence(line, open);
      lineStart =
        e >= n ? n + 1 : s.charCodeAt(e) === 13 && s.charCodeAt(e + 1) === 10 ? e + 2 : e + 1;
      if (closed || e >= n) break;
    }
    parts.push(block.join("\n"));
    pos = lineStart;
  }
  return parts.join("\n").trimEnd();
}

/** End of the line starting at i (index of its `\n` or `\r`, or the text's length). */
function lineEnd(s: string, i: number, noCR: boolean): number {
  if (noCR) {
    // Text without CR (the usual case): the native search finds the line end.
    const e = s.indexOf("\n", i);
    return e < 0 ? s.length : e;
  }
  let e = i;
  while (e < s.length) {
    const c = s.charCodeAt(e);
    if (c === 10 || c === 13) break;
    e++;
  }
  return e;
}

/** Start of the line holding position i. */
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
  s: string,
  from: number,
  noCR: boolean,
): { start: number; fence: { char: number; length: number } } | undefined {
  MARKER.lastIndex = from;
  while (MARKER.test(s)) {
    const at = MARKER.lastIndex - 3; // test(): no match object per marker
    const start = lineStartOf(s, at);
    const end = lineEnd(s, at, noCR);
    const fence = fenceOpener(s.slice(start, end));
    if (fence !== undefined) return { start, fence };
    MARKER.lastIndex = end; // no other marker on this line can open a fence
  }
  return undefined;
}
