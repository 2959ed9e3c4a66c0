/**
 * The one sampled pass that finds the prefilter's token runs and the base64
 * runs together (shared-runs.ts), against the two separate searches it
 * replaces, on text dense in the characters that end one kind of run and
 * not the other (`.` ends a base64 run, `+`, `/`, `=` a token run).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classTableOf } from "../../src/secrets/class-table.js";
import { nextLongRun } from "../../src/secrets/long-runs.js";
import { longTokenRuns } from "../../src/secrets/prefilter.js";
import { BASE64_CLASS } from "../../src/secrets/redact.js";
import { sharedRuns } from "../../src/secrets/shared-runs.js";

const BASE64 = classTableOf(BASE64_CLASS);

/** Every maximal base64 run of `min` or more, by the search the scanner used before. */
function base64Runs(text: string, min: number): number[] {
  const out: number[] = [];
  for (let r = nextLongRun(text, 0, BASE64, min); r !== undefined; ) {
    out.push(r.start, r.end);
    r = nextLongRun(text, r.end, BASE64, min);
  }
  return out;
}

const piece = fc.constantFrom(
  "a",
  "Zz9",
  "abcdefghij",
  "0123456789abcdef",
  "+",
  "/",
  "=",
  ".",
  "-",
  "_",
  " ",
  "é",
  "\ud800",
  "→",
  "\n",
);
const text = fc.array(piece, { maxLength: 80 }).map((a) => a.join(""));

describe("shared runs", () => {
  it("gives the token runs and the base64 runs of the separate searches", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 200 }), (t, limit) => {
        const got = sharedRuns(t, BASE64, 20, limit);
        expect(got.tokenText).toBe(longTokenRuns(t, limit));
        expect(got.base64).toEqual(base64Runs(t, 20));
      }),
      { numRuns: 20000, seed: 32 },
    );
  });

  it("finds runs of exactly the minimum, and one shorter, at every offset and next to every breaker", () => {
    for (const breaker of [".", "+", "/", "=", " ", "é", "\ud800"]) {
      for (const len of [19, 20, 21]) {
        for (let pad = 0; pad < 22; pad++) {
          const run = "k".repeat(len);
          const t = `${"w ".repeat(pad)}${run}${breaker}${run}${breaker}x${pad % 3 === 0 ? "" : run}`;
          const got = sharedRuns(t, BASE64, 20, t.length);
          expect(got.tokenText).toBe(longTokenRuns(t, t.length));
          expect(got.base64).toEqual(base64Runs(t, 20));
        }
      }
    }
  });
});
