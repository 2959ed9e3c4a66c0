/**
 * The anchor-first fast paths of normalization, each against the slower
 * statement it replaces: the whitespace rule against the line-by-line
 * reference, the secret scanner's literal prefilter against the same
 * patterns run unfiltered, and the scanner's candidate positions against
 * the one-regex-per-rule reference on text where every rule's anchors are
 * dense.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type NormalizeOptions, normalizePrompt } from "../../src/normalize/index.js";
import { collapseRuns, collapseWhitespace } from "../../src/normalize/whitespace.js";
import { nextLongRun } from "../../src/secrets/long-runs.js";
import { SECRET_PATTERNS } from "../../src/secrets/patterns.js";
import { longTokenRuns, patternFilter, requiredLiterals } from "../../src/secrets/prefilter.js";
import { createSecretScanner } from "../../src/secrets/redact.js";
import { minTokenRun } from "../../src/secrets/token-runs.js";
import { referenceNormalize, referenceWhitespace } from "../reference/normalize-reference.js";
import { lineByLineWhitespace } from "../reference/whitespace-lines.js";
import { FAKE_AWS_SECRET, FAKE_KEYS, FAKE_PEM, noise } from "../secrets/fakes.js";

const fenceText = fc
  .array(
    fc.constantFrom(
      "```",
      "```py",
      "````",
      "~~~",
      "~~~~",
      "`",
      "``",
      " ``` ",
      "\t~~~",
      "x```",
      "```a`b",
      "\n",
      "\r\n",
      "\r",
      " ",
      "  ",
      "\t",
      "\u00a0",
      "\u2028",
      "\v",
      "code",
      "    indented",
      "a",
      "é",
    ),
    { maxLength: 60 },
  )
  .map((a) => a.join(""));

describe("whitespace fast path (markers first)", () => {
  it("equals the line-by-line implementation it replaces on fence-dense text", () => {
    fc.assert(
      fc.property(fenceText, (text) => {
        expect(collapseWhitespace(text)).toBe(lineByLineWhitespace(text));
      }),
      { numRuns: 5000, seed: 17 },
    );
  });

  it("equals the regex reference on fence-dense text without U+2028", () => {
    // U+2028 after a fence marker: the reference's `.` stops at it, the rule reads it as
    // part of the info string (a known difference of the two statements, not of the fast path).
    fc.assert(
      fc.property(fenceText, (text) => {
        const t = text.replaceAll("\u2028", " ");
        expect(collapseWhitespace(t)).toBe(referenceWhitespace(t));
      }),
      { numRuns: 5000, seed: 19 },
    );
  });
});

describe("whitespace runs (one class test per position)", () => {
  /** The statement the rule's regex replaced: every run of two or more, or a lone non-space. */
  const byTwoBranches = (s: string) => s.replace(/\s{2,}|[^\S ]/g, " ").trim();
  // Every character \s matches (ECMAScript WhiteSpace and LineTerminator), neighbours
  // that it does not (U+180E, U+200B, ZWJ), surrogates halves and pairs, non-ASCII letters.
  const WHITESPACE = [..."\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"];
  for (let c = 0x2000; c <= 0x200a; c++) WHITESPACE.push(String.fromCharCode(c));
  const piece = fc.oneof(
    fc.constantFrom(...WHITESPACE),
    fc.constantFrom(
      "  ",
      " \n ",
      "\r\n",
      "\u180e",
      "\u200b",
      "\u200d",
      "a",
      "é",
      "\ud83d",
      "\ude00",
      "😀",
    ),
    fc.string({ maxLength: 3 }),
  );
  const wsText = fc.array(piece, { maxLength: 80 }).map((a) => a.join(""));

  it("collapses exactly what `\\s{2,}|[^\\S ]` collapses", () => {
    fc.assert(
      fc.property(wsText, (text) => {
        expect(collapseRuns(text)).toBe(byTwoBranches(text));
      }),
      { numRuns: 10000, seed: 29 },
    );
  });

  it("collapses every single whitespace character and every pair of them", () => {
    for (const a of WHITESPACE) {
      expect(collapseRuns(`x${a}y`)).toBe(byTwoBranches(`x${a}y`));
      for (const b of WHITESPACE) expect(collapseRuns(`x${a}${b}y`)).toBe("x y");
    }
  });
});

describe("secret pattern prefilter", () => {
  it("reads a literal from every built-in pattern", () => {
    for (const p of SECRET_PATTERNS) expect(requiredLiterals(p.regex), p.name).toBeDefined();
  });

  it("every match of every pattern on the fake keys contains the pattern's literal", () => {
    const texts = [
      ...FAKE_KEYS.map(([, key]) => `see ${key} here`),
      `aws_secret_access_key = ${FAKE_AWS_SECRET}`,
      `SecretAccessKey: "${FAKE_AWS_SECRET}"`,
      FAKE_PEM,
      "Authorization: Bearer abcdefghij0123456789XYZ",
      "Basic dXNlcjpwYXNzd29yZDEyMzQ1Njc4",
      "Server=x;Password=hunter2hunter2;",
      "postgres://user:s3cr3tpass@db.example/x",
    ];
    for (const p of SECRET_PATTERNS) {
      const lit = requiredLiterals(p.regex)!;
      for (const text of texts) {
        for (const m of text.matchAll(new RegExp(p.regex.source, p.regex.flags))) {
          const s = lit.fold ? m[0].toLowerCase() : m[0];
          const any = lit.any.some((a) => s.includes(lit.fold ? a.toLowerCase() : a));
          expect(any, `${p.name} on ${text.slice(0, 30)}`).toBe(true);
        }
      }
    }
  });

  const keyPiece = fc.constantFrom(
    ...FAKE_KEYS.map(([, k]) => k),
    FAKE_AWS_SECRET,
    FAKE_PEM,
    "aws_secret_access_key = ",
    "SECRET_ACCESS_KEY:",
    "Bearer ",
    "bearer\t",
    "Basic ",
    "AccountKey=",
    "password=",
    "PWD = ",
    "https://",
    "user:pa55word@",
    "sk-",
    "sk-ant-",
    "gh",
    "ghp_",
    "glpat-",
    "hf_",
    "eyJ",
    "{secret:openai-api-key}",
    "{secret:AWS_SECRET_ACCESS_KEY:json}",
    " ",
    "\n",
    ";",
    "=",
    "/",
    "%3D",
    noise(24, 3),
    noise(40, 9),
    "dXNlcjpzay1wcm9qLWExQjJjM0Q0ZTVGNmc3SDhpOUowazFMMg==",
  );
  const keyText = fc.array(keyPiece, { maxLength: 20 }).map((a) => a.join(""));

  it("redacts exactly what the unfiltered patterns redact", () => {
    // A copy of the list: the scanner only prefilters the built-in list itself.
    const filtered = createSecretScanner({ env: {} });
    const unfiltered = createSecretScanner({ env: {}, patterns: [...SECRET_PATTERNS] });
    fc.assert(
      fc.property(keyText, (text) => {
        const a: never[] = [];
        const b: never[] = [];
        expect(filtered.redactString(text, "$", a)).toBe(unfiltered.redactString(text, "$", b));
        expect(a).toEqual(b);
      }),
      { numRuns: 3000, seed: 23 },
    );
  });

  it("reports each pattern whose literal occurs, in any case when the pattern folds case", () => {
    const filter = patternFilter(SECRET_PATTERNS.map((p) => p.regex));
    const on = filter.candidates(`x PASSWORD= y sk-ant-${"z".repeat(13)} bearer`);
    const names = SECRET_PATTERNS.filter((_, i) => on[i] === true).map((p) => p.name);
    expect(names).toEqual([
      "anthropic-api-key",
      "openai-api-key",
      "connection-string-password",
      "bearer-token",
    ]);
  });

  it("looks for in-run shapes' literals only inside runs of 20+ token characters", () => {
    const filter = patternFilter(SECRET_PATTERNS.map((p) => p.regex));
    const names = (text: string) => {
      const on = filter.candidates(text);
      return SECRET_PATTERNS.filter((_, i) => on[i] === true).map((p) => p.name);
    };
    // 19 token characters: no openai key fits; 20: one may.
    expect(names(`a sk-${"x".repeat(16)} b`)).toEqual([]);
    expect(names(`a sk-${"x".repeat(17)} b`)).toEqual(["openai-api-key"]);
    // A run ends at any other character: a space, a non-ASCII letter, a lone surrogate.
    expect(names(`a sk-${"x".repeat(8)}é${"x".repeat(8)} b`)).toEqual([]);
    expect(names(`a sk-${"x".repeat(8)}\ud800${"x".repeat(8)} b`)).toEqual([]);
    // `.` continues a run (JWTs, ya29. tokens).
    expect(names(`a eyJ${"x".repeat(8)}.${"x".repeat(8)} b`)).toEqual(["json-web-token"]);
  });
});

describe("shapes inside token runs (token-runs.ts)", () => {
  it("reads the shortest all-token match off a pattern, or nothing", () => {
    const byName = (name: string) => SECRET_PATTERNS.find((p) => p.name === name)!.regex;
    expect(minTokenRun(byName("openai-api-key"))).toBe(23);
    expect(minTokenRun(byName("aws-access-key-id"))).toBe(20);
    expect(minTokenRun(byName("gitlab-token"))).toBe(25);
    expect(minTokenRun(byName("slack-token"))).toBe(15);
    for (const name of ["bearer-token", "url-password", "private-key", "basic-auth"]) {
      expect(minTokenRun(byName(name)), name).toBeUndefined();
    }
    expect(minTokenRun(/ab[A-Z ]{30}/g)).toBeUndefined(); // a space
    expect(minTokenRun(/ab[^ ]{30}/g)).toBeUndefined(); // negated: non-ASCII too
    expect(minTokenRun(/ab\w{30}/g)).toBeUndefined(); // a class escape
    expect(minTokenRun(/ab.{30}/g)).toBeUndefined();
    expect(minTokenRun(/a|b{30}/g)).toBeUndefined();
    expect(minTokenRun(/(ab)c{30}/g)).toBeUndefined();
    expect(minTokenRun(/ab=[A-Z]{30}/g)).toBeUndefined(); // `=` is no token character
    expect(minTokenRun(/ab\/[A-Z]{30}/g)).toBeUndefined(); // nor `/`
    expect(minTokenRun(/(?:ab|c=)[A-Z]{30}/g)).toBeUndefined();
    expect(minTokenRun(/ab[a-z]{30}/iu)).toBeUndefined(); // Unicode folding: not read
    expect(minTokenRun(/(?:ab|c)d{3,}e?f*g+\.-/g)).toBe(7);
  });

  const inRunPatterns = SECRET_PATTERNS.filter((p) => (minTokenRun(p.regex) ?? 0) >= 20);
  const runPiece = fc.constantFrom(
    ...FAKE_KEYS.map(([, k]) => k),
    "sk-",
    "xoxb-1234567890", // a slack token shorter than 20: searched in the whole text
    "eyJ",
    "ya29.",
    "SG.",
    ".",
    "-",
    "_",
    "=",
    "+/",
    " ",
    "é",
    "\ud800",
    ":",
    noise(12, 5),
    noise(30, 7),
  );
  const runText = fc.array(runPiece, { maxLength: 16 }).map((a) => a.join(""));

  it("every match of an in-run shape lies in a run of 20+ token characters", () => {
    const texts = [
      ...FAKE_KEYS.map(([, key]) => ` ${key} `),
      ...fc.sample(runText, { numRuns: 500, seed: 31 }),
    ];
    let matched = 0;
    for (const p of inRunPatterns) {
      for (const text of texts) {
        for (const m of text.matchAll(new RegExp(p.regex.source, p.regex.flags))) {
          const run = longTokenRuns(text.slice(m.index, m.index + m[0].length));
          expect(run, `${p.name} on ${text.slice(0, 40)}`).toBe(m[0]);
          matched++;
        }
      }
    }
    expect(matched).toBeGreaterThan(inRunPatterns.length);
  });

  it("redacts exactly what the unfiltered patterns redact, keys at run edges", () => {
    const filtered = createSecretScanner({ env: {} });
    const unfiltered = createSecretScanner({ env: {}, patterns: [...SECRET_PATTERNS] });
    fc.assert(
      fc.property(runText, fc.nat(300), (text, pad) => {
        // Past the prefilter's threshold, so the filter is what runs.
        const t = `${"w ".repeat(130 + (pad % 7))}${text}`;
        const a: never[] = [];
        const b: never[] = [];
        expect(filtered.redactString(t, "$", a)).toBe(unfiltered.redactString(t, "$", b));
        expect(a).toEqual(b);
      }),
      { numRuns: 3000, seed: 37 },
    );
  });
});

describe("scanner candidates (anchors first)", () => {
  const opts: NormalizeOptions = {
    projectPath: "/srv/run-7",
    homeDir: "/home/u",
    tmpDirs: ["/tmp"],
    roots: { win: "C:\\Users\\Me\\proj", unc: "\\\\srv\\share\\x" },
  };
  const dense = fc
    .array(
      fc.constantFrom(
        "0",
        "1",
        "12",
        "123",
        "2026",
        "-",
        "a",
        "f",
        "g",
        "x",
        "X",
        "{",
        "}",
        "_",
        ".",
        ":",
        "T",
        "Z",
        "/",
        "\\",
        "c:",
        "C:\\Users\\Me\\proj",
        "\\\\srv\\share\\x",
        "/srv/run-7",
        "/home/u",
        "3f2504e0",
        "4f89",
        "11d3-9a0c-0305e82c3301",
        "3f2504e04f8911d39a0c0305e82c3301",
        "2026-09-09T14:33",
        ":21",
        "1767225600000",
        "é",
      ),
      { maxLength: 40 },
    )
    .map((a) => a.join(""));

  it("equals the reference where digits, hex, separators and drive letters are dense", () => {
    fc.assert(
      fc.property(dense, (text) => {
        expect(normalizePrompt(text, opts)).toBe(referenceNormalize(text, opts));
      }),
      { numRuns: 4000, seed: 29 },
    );
  });

  it("equals the reference with no roots at all", () => {
    const none: NormalizeOptions = { homeDir: "/nonexistent-home-p", tmpDirs: [] };
    fc.assert(
      fc.property(dense, (text) => {
        expect(normalizePrompt(text, none)).toBe(referenceNormalize(text, none));
      }),
      { numRuns: 2000, seed: 31 },
    );
  });
});

describe("scanner hex runs (every fourth character read)", () => {
  const opts: NormalizeOptions = {
    projectPath: "/srv/acme-dead",
    homeDir: "/home/face",
    tmpDirs: ["/tmp"],
  };
  // Runs of hex of every length next to what ends or glues them, so run
  // starts, run ends and dates fall on every position modulo 4.
  const piece = fc.constantFrom(
    "a",
    "b0",
    "c1d",
    "dead",
    "beef1",
    "cafe12",
    "9",
    "2026",
    "-",
    "--",
    "x",
    "g",
    " ",
    ".",
    "+",
    "{",
    "}",
    "/",
    "\\",
    ":",
    "T",
    "Z",
    "é",
    "\ud83d\ude00",
    "\ud800",
    "-09-09T14:33",
    "2026-09-09T14:33:21Z",
    "ab2026-09-09T10:00",
    "ff1767225600000",
    "1767225600000",
    "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    "3f2504e04f8911d39a0c0305e82c3301",
    "/srv/acme-dead",
    "/home/face",
    "/tmp",
  );
  const text = fc
    .tuple(fc.nat(7), fc.array(piece, { maxLength: 40 }))
    .map(([pad, a]) => " ".repeat(pad) + a.join(""));

  it("equals the reference with run boundaries at every offset", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(normalizePrompt(t, opts)).toBe(referenceNormalize(t, opts));
      }),
      { numRuns: 5000, seed: 37 },
    );
  });

  it("keeps a UUID whose last digits start a timestamp (timestamps apply first)", () => {
    const none: NormalizeOptions = { homeDir: "/nonexistent-home-q", tmpDirs: [] };
    for (const [input, output] of [
      ["3f2504e04f8911d39a0c0305e82c3301-09-09T14:33", "3f2504e04f8911d39a0c0305e82c{timestamp}"],
      [
        "x 3f2504e0-4f89-11d3-9a0c-0305e82c3301-09-09T14:33 y",
        "x 3f2504e0-4f89-11d3-9a0c-0305e82c{timestamp} y",
      ],
      // Not a timestamp after all (a digit before it, a month 13): the UUID goes.
      ["3f2504e04f8911d39a0c0305e8223301-09-09T14:33", "{uuid}-09-09T14:33"],
      ["3f2504e04f8911d39a0c0305e82c3301-13-09T14:33", "{uuid}-13-09T14:33"],
    ]) {
      expect(referenceNormalize(input!, none)).toBe(output);
      expect(normalizePrompt(input!, none)).toBe(output);
      expect(normalizePrompt(input!, { ...none, disableRules: ["timestamp"] })).toBe(
        referenceNormalize(input!, { ...none, disableRules: ["timestamp"] }),
      );
    }
  });

  it("finds a rule after every length of padding and glue", () => {
    const cases: [string, string][] = [
      ["2026-09-09T14:33:21Z", "{timestamp}"],
      ["ab2026-09-09T10:00", "ab{timestamp}"],
      ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "{uuid}"],
      ["1767225600000", "{timestamp}"],
      ["/tmp/x", "{tmp}/x"],
    ];
    for (let pad = 0; pad < 9; pad++) {
      for (const glue of ["", "x", "g, ", "zz "]) {
        for (const [input, output] of cases) {
          const t = `${"q".repeat(pad)} ${glue}${input} end`;
          const got = normalizePrompt(t, opts);
          expect(got).toBe(referenceNormalize(t, opts));
          if (glue === "" || glue.endsWith(" ") || input.startsWith("2026")) {
            expect(got, t).toContain(output);
          }
        }
      }
    }
  });
});

describe("long runs (every min-th character read)", () => {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = /[A-Za-z0-9+/_=-]/.test(String.fromCharCode(c)) ? 1 : 0;
  /** The statement it replaces: the first run of `min`, found by a regex, then extended. */
  const byRegex = (text: string, from: number, min: number) => {
    const re = new RegExp(`[A-Za-z0-9+/_=-]{${min}}`, "g");
    re.lastIndex = from;
    const m = re.exec(text);
    if (m === null) return undefined;
    let end = m.index + min;
    while (end < text.length && /[A-Za-z0-9+/_=-]/.test(text[end]!)) end++;
    return { start: m.index, end };
  };
  const piece = fc.constantFrom(
    "a",
    "Zz9",
    "+/",
    "=",
    "-",
    "_",
    " ",
    ".",
    "é",
    "\ud800",
    "abcdefghij",
  );
  const text = fc.array(piece, { maxLength: 60 }).map((a) => a.join(""));

  it("finds the same run as a regex over every character, from every start", () => {
    fc.assert(
      fc.property(text, fc.nat(30), fc.integer({ min: 1, max: 24 }), (t, from, min) => {
        const f = Math.min(from, t.length);
        expect(nextLongRun(t, f, table, min)).toEqual(byRegex(t, f, min));
      }),
      { numRuns: 5000, seed: 41 },
    );
  });

  it("finds a base64-hidden key at every offset of the text", () => {
    const scanner = createSecretScanner({ env: {} });
    const hidden = Buffer.from("user:sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2").toString("base64");
    for (let pad = 0; pad < 24; pad++) {
      const t = `${"w ".repeat(pad)}auth ${hidden} end`;
      expect(scanner.redactString(t, "$", [])).toBe(
        `${"w ".repeat(pad)}auth {secret:openai-api-key} end`,
      );
    }
  });
});
