/**
 * The whitespace rule's single-output implementation (native searches for
 * the runs, block lines copied as long slices, one join) against the
 * markers-first driver it replaced, kept in test/reference/: the same output
 * on every input. The random texts are dense in what each search could get
 * wrong: every character `\s` matches and its near misses, runs of them next
 * to "\n", CRLF and lone CR, fence markers of both kinds with indentation,
 * info strings (with backticks), unclosed fences and longer closers, and
 * non-ASCII text (so the strings are two-byte, as real prompts are).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collapseWhitespace } from "../../src/normalize/whitespace.js";
import { isWhitespaceCode } from "../../src/normalize/whitespace-anchors.js";
import { markersFirstWhitespace } from "../reference/whitespace-markers.js";

// Every character \s matches (WhiteSpace and LineTerminator).
const WHITESPACE = [..."\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"];
for (let c = 0x2000; c <= 0x200a; c++) WHITESPACE.push(String.fromCharCode(c));

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...WHITESPACE) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "  ",
      "   ",
      " \n",
      "\n ",
      "\n\n",
      "\n  ",
      " \n\t ",
      "\r\n",
      "\r",
      "\r\r\n",
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "```",
      "````",
      "`````",
      "~~~",
      "~~~~",
      "```ts",
      "```py title",
      "~~~ `x` info",
      "```a`b",
      "`",
      "``",
      "~~",
      "  ```",
      "\t~~~",
      "\u3000```",
      "x```",
      "``` \t",
      "~~~\u00a0",
      "```\u2028",
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "a",
      "word",
      "é",
      "café —",
      "→ ✓",
      "\u180e",
      "\u200b",
      "\ufeffx",
      "😀",
      "\ud83d",
      "x =  1;",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
const text = fc.array(piece, { maxLength: 120 }).map((a) => a.join(""));

describe("whitespace rule, single output", () => {
  it("equals the markers-first driver on whitespace- and fence-dense text", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(collapseWhitespace(t)).toBe(markersFirstWhitespace(t));
      }),
      { numRuns: 20000, seed: 41 },
    );
  });

  it("equals it on long texts (searches that run past a block or a part)", () => {
    const long = fc.array(piece, { minLength: 500, maxLength: 3000 }).map((a) => a.join(""));
    fc.assert(
      fc.property(long, (t) => {
        expect(collapseWhitespace(t)).toBe(markersFirstWhitespace(t));
      }),
      { numRuns: 300, seed: 43 },
    );
  });

  it.each([
    ["empty", ""],
    ["only whitespace", " \t\r\n\u3000\ufeff "],
    ["only a fence", "```"],
    ["a fence and blank lines after it", "```\n\n \n\t\n"],
    ["CRLF block with trailing blanks", "a \r\n```py \r\n  x = 1  \r\n\r\n```  \r\n b"],
    ["lone CRs", "a\r```\r x \r```\rb"],
    ["a longer closer", "```\nx\n`````\ny"],
    ["a shorter closer does not close", "````\nx\n```\ny"],
    ["tildes do not close backticks", "```\nx\n~~~\ny\n```\nz"],
    ["backticks in a backtick info string", "```a`b\nnot   a block\n```"],
    ["backticks in a tilde info string", "~~~ `x`\n  kept  \n~~~"],
    ["closer with text after it", "```\nx\n``` y\nz\n```"],
    ["indented markers", "  a\n   ```\n\tcode\t\n \u00a0```\n  b  "],
    ["marker glued to text", "x```\n  y  \n```z"],
    ["U+2028 inside an info string", "```a\u2028b\n x \n```"],
    ["U+2028 and U+FEFF at line ends in a block", "```\nx\u2028\ny\ufeff\n```"],
    ["runs at the edges of every part", "\u3000 a \u2009\n```\n x \n```\n\u00a0 b \u202f"],
    ["runs that start or end with a space", "a \n b  \n\n c\n d \t e  f"],
    ["non-ASCII next to runs", "café\u2003\u2003—  →\n✓"],
    ["two blocks back to back", "```\na\n```\n```\nb\n```"],
    ["a block at the very end without a newline", "text\n```\ncode\n```"],
  ])("%s", (_name, t) => {
    expect(collapseWhitespace(t)).toBe(markersFirstWhitespace(t));
  });

  it("is linear on whitespace runs and fence lines (no search re-reads text)", () => {
    // A correctness check on big inputs of the shapes that would make a
    // cached search re-read text; the time guard is in properties.test.ts.
    for (const t of [
      " \t".repeat(100_000),
      "a  ".repeat(100_000),
      "```\n".repeat(50_000),
      "```\n  x  \n".repeat(30_000),
      `${"\n".repeat(100_000)}\`\`\`\n${" \r\n".repeat(50_000)}`,
    ]) {
      expect(collapseWhitespace(t)).toBe(markersFirstWhitespace(t));
    }
  });
});

describe("isWhitespaceCode", () => {
  it("is exactly \\s on every UTF-16 code unit", () => {
    const wrong: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      if (isWhitespaceCode(c) !== /\s/.test(String.fromCharCode(c))) wrong.push(c.toString(16));
    }
    expect(wrong).toEqual([]);
  });
});
