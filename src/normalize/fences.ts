/**
 * The fence grammar of the whitespace rule: CommonMark's fenced code blocks
 * (spec section 4.5), with the two differences src/normalize/whitespace.ts
 * explains (any leading whitespace before a marker; the rule's output is
 * idempotent).
 */
import { isWhitespaceCode } from "./whitespace-anchors.js";

/** The opening fence on this line: its marker character and length, or undefined. */
export function fenceOpener(line: string): { char: number; length: number } | undefined {
  let i = 0;
  while (i < line.length && isWhitespaceCode(line.charCodeAt(i))) i++;
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
  while (i < line.length && isWhitespaceCode(line.charCodeAt(i))) i++;
  let j = i;
  while (line.charCodeAt(j) === open.char) j++;
  if (j - i < open.length) return false;
  while (j < line.length && isWhitespaceCode(line.charCodeAt(j))) j++;
  return j === line.length;
}
