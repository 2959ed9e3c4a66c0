/**
 * The scanner's rule candidates (scanner.ts): the positions read back from
 * each `-`, and the runs of exactly 13 digits and exactly 32 hex characters
 * found by reading every 13th and 32nd character. Each is checked against
 * the one-regex-per-rule reference on text where those anchors are dense
 * and fall on every residue of the strides.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type NormalizeOptions, normalizePrompt } from "../../src/normalize/index.js";
import { referenceNormalize } from "../reference/normalize-reference.js";

const opts: NormalizeOptions = {
  projectPath: "/srv/acme-dead",
  homeDir: "/home/face",
  tmpDirs: [],
};

const digits = (n: number) => "1767225600000123456789012345678901234".slice(0, n);
const hex = (n: number) => "3f2504e04f8911d39a0c0305e82c3301abcdef0123".slice(0, n);

// Runs one shorter, as long as, and one longer than each rule needs, and
// dashes in every place a look-back could land.
const piece = fc.constantFrom(
  ...[3, 4, 5, 7, 8, 9, 12, 13, 14].map(digits),
  ...[7, 8, 9, 31, 32, 33].map(hex),
  "-",
  "--",
  "-09-09T14:33",
  "-09-09T14:33:21Z",
  "-4f89-11d3-9a0c-0305e82c3301",
  "-4f89-11d3-9a0c-0305e82c33012",
  "2026",
  "ab",
  "x",
  "g",
  " ",
  ".",
  "+",
  "{",
  "}",
  "/",
  ":",
  "T",
  "é",
  "/home/face",
);
const text = fc
  .tuple(fc.nat(40), fc.array(piece, { maxLength: 30 }))
  .map(([pad, a]) => "q".repeat(pad) + a.join(""));

describe("scanner candidates from dashes and exact-length runs", () => {
  it("equals the reference with runs and dashes at every offset", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(normalizePrompt(t, opts)).toBe(referenceNormalize(t, opts));
      }),
      { numRuns: 5000, seed: 41 },
    );
  });

  it("equals the reference with each rule turned off", () => {
    for (const rule of ["timestamp", "uuid", "epoch-millis"]) {
      const off = { ...opts, disableRules: [rule] };
      fc.assert(
        fc.property(text, (t) => {
          expect(normalizePrompt(t, off)).toBe(referenceNormalize(t, off));
        }),
        { numRuns: 1000, seed: 43 },
      );
    }
  });

  it("finds each rule after every padding of a stride", () => {
    const cases: [string, string][] = [
      ["1767225600000", "{timestamp}"],
      ["3f2504e04f8911d39a0c0305e82c3301", "{uuid}"],
      ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "{uuid}"],
      ["2026-09-09T14:33:21Z", "{timestamp}"],
      ["ab2026-09-09T10:00", "ab{timestamp}"],
    ];
    for (let pad = 0; pad < 33; pad++) {
      for (const [input, output] of cases) {
        const t = `p${"q".repeat(pad)} ${input} end`;
        expect(normalizePrompt(t, opts), t).toBe(`p${"q".repeat(pad)} ${output} end`);
      }
    }
  });

  it("keeps runs one character too short or too long", () => {
    for (const kept of [
      digits(12),
      digits(14),
      hex(31),
      hex(33),
      `${hex(7)}-4f89-11d3-9a0c-0305e82c3301`,
    ]) {
      expect(normalizePrompt(`see ${kept} here`, opts)).toBe(`see ${kept} here`);
    }
  });
});
