/**
 * The text between fenced blocks: every whitespace run becomes one space,
 * both ends trimmed (what `collapseRuns` states with one regular-expression
 * replace). Written as pieces of the output rather than a new string: the
 * caller joins every piece of the whole text once, and each full-size
 * two-byte string built and read costs about 270 µs on the reference VM,
 * nearly all of it the large-object allocation (a 60 K-character string,
 * under the limit, costs 22 µs); the parts' own strings made that twice.
 *
 * A run needs collapsing when it holds a "\n", another non-space whitespace
 * character, or two spaces; single spaces stay. The "\n"s are found with
 * `indexOf` (native, about 30 ns a hit), the rest with one regular
 * expression ({@link Anchors.nextUnusual}); from either hit the run is
 * widened to its whole extent, which is only a few characters.
 */
import { type Anchors, isWhitespaceCode } from "./whitespace-anchors.js";

/**
 * Push the collapsed and trimmed form of `s[start, end)` onto `out`,
 * preceded by `separator`; push nothing when it is only whitespace.
 */
export function pushCollapsed(
  anchors: Anchors,
  start: number,
  end: number,
  separator: string,
  out: string[],
): void {
  const s = anchors.s;
  let a = start;
  let b = end;
  while (a < b && isWhitespaceCode(s.charCodeAt(a))) a++;
  while (b > a && isWhitespaceCode(s.charCodeAt(b - 1))) b--;
  if (a === b) return;
  if (separator !== "") out.push(separator);
  // s[a] and s[b - 1] are not whitespace, so every run found below lies
  // strictly inside [a, b) and is replaced by one space.
  let copy = a; // start of the text not yet pushed
  let from = a; // where the next search starts: never whitespace
  for (;;) {
    // The searches are cached across the whole text (see Anchors): a
    // search that ran past `b`, or found nothing, is not repeated for the
    // next part, so text between many short parts is read once.
    const lf = Math.min(anchors.nextLF(from), b);
    const unusual = Math.min(anchors.nextUnusual(from), b);
    const hit = Math.min(lf, unusual);
    if (hit >= b) break;
    let runStart = hit;
    while (runStart > from && isWhitespaceCode(s.charCodeAt(runStart - 1))) runStart--;
    let runEnd = hit + 1;
    while (isWhitespaceCode(s.charCodeAt(runEnd))) runEnd++;
    // The space that replaces the run is, when the run begins or ends with
    // one, that space of the input: one piece fewer to join (each piece
    // costs the join about as much as 30 characters of copying), and most
    // runs here do ("\n  " of indented lines, two spaces in columns).
    if (s.charCodeAt(runStart) === 32) {
      out.push(s.slice(copy, runStart + 1));
      copy = runEnd;
    } else if (s.charCodeAt(runEnd - 1) === 32) {
      out.push(s.slice(copy, runStart));
      copy = runEnd - 1;
    } else {
      out.push(s.slice(copy, runStart), " ");
      copy = runEnd;
    }
    from = runEnd;
  }
  out.push(s.slice(copy, b));
}
