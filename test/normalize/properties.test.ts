import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type NormalizeOptions, normalizePrompt } from "../../src/normalize/index.js";
import { referenceNormalize } from "../reference/normalize-reference.js";

const opts: NormalizeOptions = {
  projectPath: "/work/run-7",
  homeDir: "/home/u",
  tmpDirs: ["/tmp"],
  roots: { cache: "/var/cache/ci", win: "C:\\Users\\Me\\proj" },
};

// Text built from the pieces the rules care about, so collisions between
// rules (a root next to a UUID, a timestamp glued to digits…) are common.
const piece = fc.constantFrom(
  "/work/run-7",
  "/work/run-7/src",
  "/home/u",
  "/home/u2",
  "/tmp",
  "/var/cache/ci",
  "C:\\Users\\Me\\proj",
  "c:/users/me/PROJ",
  "file://",
  "://",
  "/",
  "\\",
  ".",
  "-",
  ":",
  "_",
  "T",
  "Z",
  "+05:30",
  " ",
  "\n",
  "\t",
  "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "3f2504e04f8911d39a0c0305e82c3301",
  "abcdef",
  "2026-09-09",
  "2026-09-09T14:33:21",
  "14:33",
  ".123",
  "1767225600000",
  "0",
  "9",
  "x",
  "é",
  "e\u0301",
  "\ud800",
  "{uuid}",
  // Fenced code and the shapes that must be kept apart.
  "```",
  "```py",
  "````",
  "~~~",
  "`",
  "    ",
  "\r\n",
  "\r",
  "\u00a0",
  "2026-02-29T10:00",
  "2024-02-29 23:59:60",
  "+05:60",
  "+14:00",
  "+0530",
  "9780262033848",
  "+4915112345678",
  "0.1767225600000",
  "0x",
  "x",
  "d41d8cd98f00b204e9800998ecf8427e",
  "1b4e28ba2fa141d2883f0016d3cca427",
  "12345678901241238123456789012345",
);
const promptish = fc.array(piece, { maxLength: 40 }).map((a) => a.join(""));
const anyText = fc.oneof(
  promptish,
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.string({ maxLength: 200 }),
);

describe("normalizePrompt laws", () => {
  it("equals the one-regex-per-rule reference on rule-dense text", () => {
    fc.assert(
      fc.property(promptish, (text) => {
        expect(normalizePrompt(text, opts)).toBe(referenceNormalize(text, opts));
      }),
      { numRuns: 3000, seed: 42 },
    );
  });

  it("equals the reference on arbitrary strings", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(normalizePrompt(text, opts)).toBe(referenceNormalize(text, opts));
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = normalizePrompt(text, opts);
        expect(normalizePrompt(once, opts)).toBe(once);
      }),
      { numRuns: 3000, seed: 1 },
    );
  });

  it("never throws on any string, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 500 }), (text) => {
        expect(typeof normalizePrompt(text)).toBe("string");
      }),
      { numRuns: 2000, seed: 3 },
    );
  });

  it("is not changed by the whitespace layout of the input", () => {
    fc.assert(
      fc.property(
        fc.array(
          // Outside fenced code only: inside a fence the layout is kept.
          piece.filter((p: string) => p.trim() === p && p.length > 0 && !/[`~\r]/.test(p)),
          { maxLength: 20 },
        ),
        fc.nat(),
        (parts, k) => {
          const spaced = parts.join(" ");
          const messy = parts.join(["\n", "  ", "\t", " \r\n "][k % 4]!);
          expect(normalizePrompt(messy, opts)).toBe(normalizePrompt(spaced, opts));
        },
      ),
      { numRuns: 1000, seed: 5 },
    );
  });
});

describe("with rules turned off", () => {
  const offs: NormalizeOptions[] = [
    { ...opts, disableRules: ["timestamp"] },
    { ...opts, disableRules: ["uuid", "root:home"] },
    { ...opts, disableRules: ["whitespace", "epoch-millis"] },
    { ...opts, disableRules: ["root:<name>", "unicode-nfc"] },
  ];
  it("equals the reference and stays idempotent", () => {
    fc.assert(
      fc.property(promptish, fc.nat(offs.length - 1), (text, k) => {
        const o = offs[k]!;
        const once = normalizePrompt(text, o);
        expect(once).toBe(referenceNormalize(text, o));
        expect(normalizePrompt(once, o)).toBe(once);
      }),
      { numRuns: 2000, seed: 11 },
    );
  });
});

describe("idempotence edge cases", () => {
  it.each([
    ["a root glued to another root", "/work/run-7/work/run-7", "{project}/work/run-7"],
    [
      "a UUID glued to a timestamp",
      "2026-09-09T14:33:21abcdef0123456789abcdef0123456789",
      "{timestamp}abcdef0123456789abcdef0123456789",
    ],
    ["a root glued to a token-looking brace", "/home/u{x}", "/home/u{x}"],
  ])("%s", (_name, text, expected) => {
    const once = normalizePrompt(text, opts);
    expect(once).toBe(expected);
    expect(normalizePrompt(once, opts)).toBe(once);
  });
});

describe("linear time on adversarial input", () => {
  // A guard against regex blow-ups, not a speed assertion: the work must
  // grow with the input, not with its square. The same shape at an eighth
  // of the size is the yardstick (linear: ~8× the time, quadratic: ~64×),
  // each the fastest of three runs, so a busy machine slows both alike.
  const cases: [string, string][] = [
    ["digits", "1".repeat(2_000_000)],
    ["dashes", "-".repeat(2_000_000)],
    ["spaces", " \t".repeat(1_000_000)],
    ["slashes", "/".repeat(2_000_000)],
    ["hex and dashes", "abcdef12-".repeat(250_000)],
    ["near-timestamps", "2026-09-09T1".repeat(160_000)],
    ["root prefixes", "/work/run-".repeat(200_000)],
    ["file urls", "file:///".repeat(250_000)],
    ["fence markers", "```\n".repeat(500_000)],
    ["indented fence lines", "```\n    ".repeat(250_000)],
    ["backtick runs", "`".repeat(2_000_000)],
    ["tilde lines", "~~~ \t\r\n".repeat(333_000)],
    ["short parts between blocks", "a\n```\nx\n```\n".repeat(166_000)],
    ["short parts between blocks, CR line ends", "a\r```\rx\r```\r".repeat(166_000)],
  ];
  const fastest = (text: string) => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      normalizePrompt(text, opts);
      best = Math.min(best, performance.now() - t0);
    }
    return best;
  };
  it.each(cases)("%s (2 MB) takes about 8× an eighth of it, not 64×", (_name, text) => {
    const small = fastest(text.slice(0, text.length / 8));
    const whole = fastest(text);
    // 1 ms of slack: at an eighth a linear scan can take well under a millisecond.
    expect(whole).toBeLessThan(24 * Math.max(small, 1));
  });
});
