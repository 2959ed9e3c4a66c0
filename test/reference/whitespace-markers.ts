/**
 * The whitespace rule's driver as it was before the single-output rewrite
 * (markers first, the text between fences collapsed part by part with one
 * regular-expression replace each, block lines sliced and joined). Kept as
 * the statement the rewrite in src/normalize/whitespace.ts must equal; the
 * property test in test/normalize/whitespace-single-pass.test.ts compares
 * the two. The fence grammar (fenceOpener, closesFence) and the run rule
 * (collapseRuns) are unchanged by the rewrite and imported.
 */
import { closesFence, collapseRuns, fenceOpener } from "../../src/normalize/whitespace.js";

const FENCE_HINT = /```|~~~/;

/** The markers-first whitespace rule (see the module comment). */
export function markersFirstWhitespace(s: string): string {
  if (!FENCE_HINT.test(s)) return collapseRuns(s);
  const parts: string[] = [];
  const n = s.length;
  const noCR = s.indexOf("\r") < 0;
  let pos = 0;
  while (pos <= n) {
    const opener = nextOpener(s, pos, noCR);
    const outside = collapseRuns(s.slice(pos, opener === undefined ? n : opener.start));
    if (outside !== "") parts.push(outside);
    if (opener === undefined) break;
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

function lineEnd(s: string, i: number, noCR: boolean): number {
  if (noCR) {
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

function nextOpener(
  s: string,
  from: number,
  noCR: boolean,
): { start: number; fence: { char: number; length: number } } | undefined {
  MARKER.lastIndex = from;
  while (MARKER.test(s)) {
    const at = MARKER.lastIndex - 3;
    const start = lineStartOf(s, at);
    const end = lineEnd(s, at, noCR);
    const fence = fenceOpener(s.slice(start, end));
    if (fence !== undefined) return { start, fence };
    MARKER.lastIndex = end;
  }
  return undefined;
}
