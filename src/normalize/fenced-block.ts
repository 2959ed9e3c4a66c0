/**
 * A fenced block's lines, kept as they are apart from trailing whitespace
 * and line endings (which become "\n"). Most lines change nothing, so the
 * block is pushed as the few long slices between the lines that do, not as
 * one slice per line: line ends come from `indexOf`, and only a line holding
 * the block's marker ("```" or "~~~") is tried as the closing one.
 */

import { closesFence } from "./fences.js";
import { type Anchors, isWhitespaceCode } from "./whitespace-anchors.js";

/**
 * Push the block whose opening line starts at `start` onto `out`; it ends
 * with the line that closes `open`, or with the text. Returns the start of
 * the line after it (the text's length + 1 when the block reaches the end).
 */
export function pushFencedBlock(
  anchors: Anchors,
  start: number,
  open: { char: number; length: number },
  out: string[],
): number {
  const s = anchors.s;
  const n = s.length;
  const backtick = open.char === 96;
  let from = start; // start of the block text not yet pushed
  let lineStart = start;
  for (let first = true; ; first = false) {
    const e = anchors.lineEnd(lineStart);
    const closed =
      !first &&
      anchors.nextMarker(backtick, lineStart) < e &&
      closesFence(s.slice(lineStart, e), open);
    let kept = e; // the line without its trailing whitespace
    while (kept > lineStart && isWhitespaceCode(s.charCodeAt(kept - 1))) kept--;
    const next =
      e >= n ? n + 1 : s.charCodeAt(e) === 13 && s.charCodeAt(e + 1) === 10 ? e + 2 : e + 1;
    if (closed || e >= n) {
      out.push(s.slice(from, kept));
      return next;
    }
    // A line that ends in whitespace or in a CR breaks the slice; a clean
    // line and its "\n" stay part of it.
    if (kept !== e || s.charCodeAt(e) !== 10) {
      out.push(s.slice(from, kept), "\n");
      from = next;
    }
    lineStart = next;
  }
}
