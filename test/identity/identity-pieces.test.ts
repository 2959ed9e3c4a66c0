/**
 * `manifestIdentity` hashes the canonical text as it is written, piece by
 * piece, and a one-piece text in one call (src/identity/identity.ts): for
 * every size around the piece boundary and a lone surrogate in the first,
 * a later or no piece, it equals SHA-256 of the domain tag followed by the
 * manifest's WTF-8 bytes, computed the plain way.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { manifestIdentity } from "../../src/identity/identity.js";
import { invocationManifest } from "../../src/identity/index.js";
import { plainIdentity } from "../helpers/plain-identity.js";

describe("manifestIdentity: one piece or many, the same bytes hashed", () => {
  it("matches the plain hash around the piece size, with a lone surrogate anywhere or nowhere", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 1, 100, 8000, 8150, 8191, 8192, 8193, 8300, 16_400, 30_000),
        fc.constantFrom("none", "start", "end", "middle"),
        fc.constantFrom("\ud800", "\udfff", "é", "🎉", '"', "\n"),
        (size, where, odd) => {
          let prompt = "p".repeat(size);
          if (where === "start") prompt = odd + prompt;
          else if (where === "end") prompt += odd;
          else if (where === "middle")
            prompt = prompt.slice(0, size >> 1) + odd + prompt.slice(size >> 1);
          const m = invocationManifest({ role: "builder", model: "m", prompt });
          expect(manifestIdentity(m)).toBe(plainIdentity(m));
        },
      ),
      { numRuns: 200 },
    );
  });
});
