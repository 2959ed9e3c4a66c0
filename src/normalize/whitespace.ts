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
const WS_TO_FIX = /\s{2,}|[^\S ]/g;

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
  const parts: string[] = [];
  let outside = "";
  let open: { char: number; length: number } | undefined;
  let block: string[] = [];
  const flushOutside = () => {
    const text = collapseRuns(outside);
    if (text !== "") parts.push(text);
    outside = "";
  };
  const n = s.length;
  let pos = 0;
  for (;;) {
    let e = pos;
    while (e < n) {
      const c = s.charCodeAt(e);
      if (c === 10 || c === 13) break;
      e++;
    }
    const line = s.slice(pos, e);
    if (open === undefined) {
      open = fenceOpener(line);
      if (open !== undefined) {
        flushOutside();
        block = [line.trimEnd()];
      } else {
        outside += `${line} `;
      }
    } else {
      block.push(line.trimEnd());
      if (closesFence(line, open)) {
        parts.push(block.join("\n"));
        open = undefined;
      }
    }
    if (e >= n) break;
    pos = s.charCodeAt(e) === 13 && s.charCodeAt(e + 1) === 10 ? e + 2 : e + 1;
  }
  if (open !== undefined) parts.push(block.join("\n"));
  flushOutside();
  return parts.join("\n").trimEnd();
}
