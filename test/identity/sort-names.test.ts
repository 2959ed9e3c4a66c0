/**
 * Member names are sorted by insertion for small objects (sortNames in
 * src/identity/canonical-json.ts): the order must be exactly the one
 * `Array.prototype.sort()` gives (UTF-16 code units, RFC 8785 §3.2.3),
 * surrogates and names that prefix one another included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sortNames } from "../../src/identity/canonical-json.js";

const unit = fc.constantFrom(
  "a",
  "b",
  "B",
  "_",
  ":",
  "é",
  "\u00ff",
  "\ud800",
  "\udc00",
  "😀",
  "\uffff",
  "1",
);
const name = fc.array(unit, { maxLength: 4 }).map((u) => u.join(""));

describe("sortNames", () => {
  it("sorts distinct names as the built-in sort does, below and above the insertion size", () => {
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 30 }), (names) => {
        const expected = [...names].sort();
        const input = [...names];
        expect(sortNames(input)).toEqual(expected);
        expect(input).toEqual(expected); // in place, as sort() is
      }),
      { numRuns: 2000 },
    );
  });
});
