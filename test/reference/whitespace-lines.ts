/**
 * The whitespace rule as it was first written: every line walked in turn,
 * the text between fences gathered line by line. The markers-first fast
 * path in src/normalize/whitespace.ts must give exactly this; the property
 * test in test/normalize/fast-paths.test.ts compares the two.
 */
import { closesFence, collapseRuns, fenceOpener } from "../../src/normalize/whitespace.js";

const FENCE_HINT = /```|~~~/;

/** The line-by-line whitespace rule (see the module comment). */
export function lineByLineWhitespace(s: string): string {
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
