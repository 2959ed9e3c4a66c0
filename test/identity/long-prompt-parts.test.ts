/**
 * A long plain prompt (32 K code units or more) is hashed by
 * `invocationIdentity` from its normalized pieces, never joined into one
 * string (src/identity/manifest.ts, `longPromptPieces`): the identity must be
 * the plain hash of the manifest `invocationManifest` builds from the whole
 * normalized text, for any text: rule matches next to astral characters and
 * lone surrogates, quotes, control characters, both of the scanner's paths
 * (roots that start with a separator, and a drive-letter root), rules turned
 * off, the secret rule off, and caller rules (which take the joined path).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapedInside } from "../../src/identity/canonical-json.js";
import {
  type IdentityOptions,
  invocationIdentity,
  invocationManifest,
} from "../../src/identity/index.js";
import { normalizePrompt } from "../../src/normalize/index.js";
import { normalizedParts, prepareNormalizer } from "../../src/normalize/internal.js";
import { plainIdentity } from "../helpers/plain-identity.js";

const PROJECT = "/home/dev/work/acme";
const DRIVE = "C:\\Users\\dev\\acme";

/** Fragments a long prompt is made of: rule matches, their look-alikes, and every kind of awkward character. */
const fragment = fc.oneof(
  fc.constantFrom(
    `${PROJECT}/src/a.ts`,
    `${DRIVE}\\src\\a.ts`,
    "/home/dev/.npmrc",
    "/tmp/run-1/out.json",
    "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    "2026-09-09T10:00:00.123Z",
    "1767225600000",
    "```ts\n  const x = 1;\n```",
    "\ud83c\udf89",
    "\ud800",
    "\udfff",
    '"quoted"',
    "back\\slash",
    "\t\u0001\u001f",
    "  \n\n  ",
    "naïve — café → ✓",
    "{project}",
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 12 }),
);

/** A prompt of at least `min` code units, from fragments, repeated until long enough. */
const longPrompt = (min: number) =>
  fc.array(fragment, { minLength: 1, maxLength: 60 }).map((xs) => {
    const unit = xs.join(" ");
    let s = unit;
    let k = 0;
    while (s.length < min) s += ` ${k++} ${unit}`;
    return s;
  });

const optionSets: IdentityOptions[] = [
  {},
  { homeDir: "/home/dev", tmpDirs: ["/tmp"] },
  { disableRules: ["uuid", "whitespace"] },
  { secrets: false, disableRules: ["timestamp"] },
  { rules: [{ name: "ticket", pattern: /JIRA-\d+/g, replacement: "{ticket}" }] },
  { roots: { cache: "/var/cache/ci" } },
];

describe("long prompts: identity from normalized pieces", () => {
  it("equals the plain hash of the manifest, for any text and options", () => {
    fc.assert(
      fc.property(
        longPrompt(32 * 1024),
        fc.constantFrom(...optionSets),
        fc.constantFrom(PROJECT, DRIVE, null),
        (prompt, opts, projectPath) => {
          const req = { role: "builder", model: "m", prompt, projectPath };
          expect(invocationIdentity(req, opts)).toBe(plainIdentity(invocationManifest(req, opts)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("takes the pieces path at 32 K code units and the joined one below (same identities)", () => {
    const base = "see /tmp/x-1/y 🎉 \ud800 ".repeat(2000);
    for (const len of [32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1]) {
      const req = { role: "r", prompt: base.slice(0, len), projectPath: null };
      expect(invocationIdentity(req)).toBe(plainIdentity(invocationManifest(req)));
    }
  });
});

describe("normalizedParts", () => {
  it("joins to normalizePrompt's answer, and no piece boundary splits a surrogate pair", () => {
    fc.assert(
      fc.property(
        longPrompt(2000),
        fc.constantFrom(PROJECT, DRIVE),
        fc.constantFrom(...optionSets),
        (text, projectPath, opts) => {
          const options = { ...opts, projectPath } as Parameters<typeof normalizePrompt>[1];
          const parts = normalizedParts(prepareNormalizer(options), text);
          expect(parts.join("")).toBe(normalizePrompt(text, options));
          for (let i = 1; i < parts.length; i++) {
            const a = parts[i - 1]!;
            const b = parts[i]!;
            const high = a.charCodeAt(a.length - 1);
            const low = b.charCodeAt(0);
            expect(high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff).toBe(false);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("escapedInside", () => {
  const inside = (s: string) => {
    // Canonical JSON keeps lone surrogates as they are; JSON.stringify escapes them, so undo that.
    const j = JSON.stringify(s).slice(1, -1);
    return j.replace(/\\u(d[89a-f][0-9a-f]{2})/g, (_, h: string) =>
      String.fromCharCode(Number.parseInt(h, 16)),
    );
  };

  it("escapes the parts' concatenation, cut at whole surrogate pairs, whatever the parts", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", maxLength: 20_000 }), { maxLength: 8 }),
        (parts) => {
          const { pieces, wellFormed } = escapedInside(parts);
          expect(pieces.join("")).toBe(inside(parts.join("")));
          expect(wellFormed).toBe(parts.join("").isWellFormed());
          for (let i = 1; i < pieces.length; i++) {
            const high = pieces[i - 1]!.charCodeAt(pieces[i - 1]!.length - 1);
            const low = pieces[i]!.charCodeAt(0);
            expect(high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps a pair whole when the parts split it", () => {
    const high = `${"a".repeat(8191)}\ud83c`;
    const { pieces } = escapedInside([high, "\udf89b"]);
    expect(pieces.join("")).toBe(`${"a".repeat(8191)}🎉b`);
    for (const p of pieces) expect(p.isWellFormed()).toBe(true);
  });
});
