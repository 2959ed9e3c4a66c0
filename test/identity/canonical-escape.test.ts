/**
 * RFC 8785 string escaping (canonical-json.ts takes native shortcuts from
 * 2,048 code units on, and below that skips strings with nothing to escape):
 * every branch (control characters,
 * lone surrogates, quotes and backslashes, each alone and together) against
 * the escaping spelled out, and lone surrogates kept apart in the identity.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalString,
  canonicalStringTwice,
  writeCanonicalJson,
} from "../../src/identity/canonical-json.js";
import { invocationIdentity } from "../../src/identity/index.js";

/** RFC 8785 §3.2.2.2, one code unit at a time; lone surrogates kept as they are. */
function reference(s: string): string {
  const short: Record<number, string> = {
    8: "\\b",
    9: "\\t",
    10: "\\n",
    12: "\\f",
    13: "\\r",
    34: '\\"',
    92: "\\\\",
  };
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out +=
      c < 0x20 || c === 34 || c === 92
        ? (short[c] ?? `\\u00${c.toString(16).padStart(2, "0")}`)
        : s[i];
  }
  return `${out}"`;
}

const piece = fc.constantFrom(
  "plain text ",
  "é→✓ ",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  '"',
  "\\",
  "\\ud",
  "\\ud800",
  "\ud800",
  "\udc00",
  "\ud83d\ude00",
  "ud",
);
const long = fc
  .tuple(fc.array(piece, { minLength: 1, maxLength: 30 }), fc.nat(3000))
  .map(([parts, pad]) => "x".repeat(2048 + pad) + parts.join(""));

describe("canonical string escaping, long strings", () => {
  it("equals the escaping spelled out, whatever the mix", () => {
    fc.assert(
      fc.property(long, (s) => {
        expect(canonicalString(s)).toBe(reference(s));
      }),
      { numRuns: 1500, seed: 23 },
    );
  });

  it("flags every piece holding a lone surrogate as not well-formed", () => {
    fc.assert(
      fc.property(long, (s) => {
        let flagged = false;
        writeCanonicalJson(s, (text, wellFormed) => {
          if (!text.isWellFormed()) expect(wellFormed).toBe(false);
          if (!wellFormed) flagged = true;
        });
        if (!s.isWellFormed()) expect(flagged).toBe(true);
      }),
      { numRuns: 1000, seed: 29 },
    );
  });

  it("keeps lone surrogates apart in long prompts with line breaks", () => {
    const body = `${"```\nconst a = 1;\n```\n".repeat(200)}tail `;
    const ids = ["\ud800", "\udc00", "\ufffd"].map((c) =>
      invocationIdentity({ role: "r", prompt: body + c }),
    );
    expect(new Set(ids).size).toBe(3);
  });
});

describe("canonical string escaping, short strings (under 2,048 code units)", () => {
  it("equals the escaping spelled out for every ASCII code unit, alone and between text", () => {
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, `ab${ch}`, `${ch}cd`, `ab${ch}cd${ch}`, "x".repeat(2000) + ch]) {
        expect(canonicalString(s), `U+${c.toString(16).padStart(4, "0")} in ${s.length}`).toBe(
          reference(s),
        );
      }
    }
  });

  it("equals the escaping spelled out, whatever the mix, and flags lone surrogates", () => {
    const short = fc.array(piece, { minLength: 0, maxLength: 12 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(short, (s) => {
        expect(canonicalString(s)).toBe(reference(s));
        let flagged = false;
        writeCanonicalJson(s, (text, wellFormed) => {
          if (!text.isWellFormed()) expect(wellFormed).toBe(false);
          if (!wellFormed) flagged = true;
        });
        expect(flagged).toBe(!s.isWellFormed());
      }),
      { numRuns: 1500, seed: 31 },
    );
  });
});

describe("a string escaped twice in one pass (a conversation's pieces)", () => {
  // The prompt's canonical JSON string, and that string's inside as the
  // manifest's canonical JSON holds it: both spelled out, one code unit at a time.
  const twiceByReference = (s: string): [string, string, boolean] => {
    const once = reference(s);
    return [once, reference(once).slice(1, -1), s.isWellFormed()];
  };

  it("equals the escaping spelled out twice for every code unit below 0x80, alone and between text", () => {
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, `ab${ch}`, `${ch}cd`, `ab${ch}cd${ch}`, `${"x".repeat(9000)}${ch}`]) {
        expect(canonicalStringTwice(s), `U+${c.toString(16)} in ${s.length}`).toEqual(
          twiceByReference(s),
        );
      }
    }
  });

  it("equals the escaping spelled out twice, whatever the mix, short and past the one-pass limit", () => {
    const any = fc
      .tuple(fc.array(piece, { minLength: 0, maxLength: 40 }), fc.constantFrom(0, 1, 2000, 8200))
      .map(([parts, pad]) => "y".repeat(pad) + parts.join(""));
    fc.assert(
      fc.property(any, fc.string({ unit: "binary" }), (s, t) => {
        expect(canonicalStringTwice(s)).toEqual(twiceByReference(s));
        expect(canonicalStringTwice(t)).toEqual(twiceByReference(t));
      }),
      { numRuns: 3000, seed: 37 },
    );
  });
});
