/**
 * The literal prefilter's reading of a leading letter class and its
 * per-literal search of the few whole-text literals, against the plain
 * statement: a pattern is a candidate exactly when one of its literals
 * occurs in the text (in any case when the pattern folds case).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SECRET_PATTERNS } from "../../src/secrets/patterns.js";
import { patternFilter, probeOf, requiredLiterals } from "../../src/secrets/prefilter.js";
import { minTokenRun, TOKEN_RUN_MIN } from "../../src/secrets/token-runs.js";

describe("literal prefilter (whole-text literals)", () => {
  it("reads a leading class of letters as one literal per letter", () => {
    expect(requiredLiterals(/([Bb]earer[ \t]{1,4})(x)/g)).toEqual({
      any: ["Bearer", "bearer"],
      fold: false,
    });
    // Other classes only start the search after them, as before.
    expect(requiredLiterals(/[A-Za-z]key=/g)).toEqual({ any: ["key="], fold: false });
    expect(requiredLiterals(/[ab]?cd/g)).toBeUndefined();
  });

  it("searches a literal's longest alphanumeric part first, only when it is a proper part", () => {
    expect(probeOf("-----BEGIN ")).toBe("BEGIN");
    expect(probeOf("Bearer")).toBeUndefined();
    expect(probeOf("://")).toBeUndefined();
    expect(probeOf("a-b")).toBeUndefined(); // too short to be worth a search of its own
  });

  const filter = patternFilter(SECRET_PATTERNS.map((p) => p.regex));
  // The shapes whose literals are searched in the whole text (not only in token runs).
  const whole = SECRET_PATTERNS.map((p, i) => ({ p, i, lit: requiredLiterals(p.regex)! })).filter(
    ({ p }) => (minTokenRun(p.regex) ?? 0) < TOKEN_RUN_MIN,
  );
  const piece = fc.oneof(
    fc.constantFrom(
      ...whole.flatMap(({ lit }) => lit.any),
      ...whole.flatMap(({ lit }) => lit.any.map((a) => a.toUpperCase())),
      "Beare",
      "earer",
      "BEGIN ",
      "-----",
      ":/",
      "xo",
      "ATATT",
      "Basi",
      " ",
      "é",
    ),
    fc.string({ maxLength: 4 }),
  );
  const text = fc.array(piece, { maxLength: 12 }).map((a) => a.join(""));

  it("marks a whole-text shape exactly when one of its literals occurs", () => {
    fc.assert(
      fc.property(text, fc.nat(3), (t, at) => {
        // Padding so the token runs hold less than half the text, at the start or the end.
        const padded =
          at === 0 ? t : at === 1 ? `${"w ".repeat(20)}${t}` : `${t}${"w ".repeat(20)}`;
        const on = filter.candidates(padded);
        for (const { p, i, lit } of whole) {
          const hay = lit.fold ? padded.toLowerCase() : padded;
          const occurs = lit.any.some((a) => hay.includes(lit.fold ? a.toLowerCase() : a));
          expect(on[i], `${p.name} on ${JSON.stringify(padded)}`).toBe(occurs);
        }
      }),
      { numRuns: 5000, seed: 59 },
    );
  });
});
