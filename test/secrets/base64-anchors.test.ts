/**
 * The base64-run filter (src/secrets/base64-anchors.ts) against the
 * statement it replaces: decode the run with Buffer and test the anchors
 * regex on the latin1 text. The filter may say "may hold" too often, never
 * too rarely; the scanner's output with it equals the output without it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodedHoldsPair,
  decodedMayHoldAnchor,
  startPairs,
} from "../../src/secrets/base64-anchors.js";
import { SECRET_ANCHORS, SECRET_PATTERNS } from "../../src/secrets/patterns.js";
import { createSecretScanner } from "../../src/secrets/redact.js";
import { FAKE_KEYS, noise } from "./fakes.js";

/** What the scanner did before the filter: decode every run, test the anchors. */
const decodedHoldsAnchor = (run: string) =>
  SECRET_ANCHORS.test(Buffer.from(run, "base64").toString("latin1"));

const PAIRS = startPairs(SECRET_ANCHORS);

/** Does `bytes` hold two adjacent bytes the pair table allows? */
const holdsPair = (bytes: Uint8Array) => {
  for (let i = 0; i + 1 < bytes.length; i++)
    if (PAIRS![bytes[i]! * 256 + bytes[i + 1]!]) return true;
  return false;
};

// Plain texts dense in anchors and near-misses, in both cases, among random bytes.
const plainPiece = fc.oneof(
  fc.constantFrom(
    "sk-",
    "SK-",
    "rk_live_",
    "ghp_",
    "glpat-",
    "hf_",
    "AIza",
    "xoxb-",
    "AKIA",
    "ASIA",
    "secret_access",
    "Bearer ",
    "bearer\t",
    "Basic ",
    "eyJ",
    "npm_",
    "pypi-",
    "SG.",
    "ya29.",
    "key=",
    "KEY=",
    "pwd",
    "PassWord",
    "signature",
    "://",
    "-----BEGIN ",
    "user:",
    "s",
    "k",
    ":",
    "/",
    "-",
    "\u00e9",
  ),
  fc.uint8Array({ maxLength: 6 }).map((b) => Buffer.from(b).toString("latin1")),
  ...FAKE_KEYS.map(([, k]) => fc.constant(k.slice(0, 12))),
);
const plain = fc.array(plainPiece, { maxLength: 12 }).map((a) => Buffer.from(a.join(""), "latin1"));

/** A plain text's base64, in either alphabet or a mix, cut and padded anywhere. */
const encodedRun = fc
  .tuple(
    plain,
    fc.constantFrom("std", "url", "mixed"),
    fc.nat(3), // characters cut off the end: every trailing-group length
    fc.array(fc.nat(200), { maxLength: 3 }), // where `=` is put in
    fc.nat(),
  )
  .map(([bytes, alphabet, cut, equals, seed]) => {
    let run = bytes.toString("base64").replace(/=+$/, "");
    if (alphabet !== "std") {
      run = [...run]
        .map((c, i) =>
          alphabet === "url" || (seed >> (i % 30)) & 1 ? c.replace("+", "-").replace("/", "_") : c,
        )
        .join("");
    }
    run = run.slice(0, Math.max(0, run.length - cut));
    for (const at of equals) {
      const i = at % (run.length + 1);
      run = `${run.slice(0, i)}=${run.slice(i)}`;
    }
    return run;
  });

describe("base64 runs that cannot hold an anchor (base64-anchors.ts)", () => {
  it("reads a start-pair table off the anchors regex, and refuses what it cannot read", () => {
    expect(PAIRS).toBeDefined();
    const pairs = PAIRS!;
    const at = (a: string, b: string) => pairs[a.charCodeAt(0) * 256 + b.charCodeAt(0)];
    expect(at("s", "k")).toBe(1);
    expect(at("S", "K")).toBe(1); // the regex folds case
    expect(at(":", "/")).toBe(1);
    expect(at("\u00ff", "k")).toBe(0);
    expect(at("q", "q")).toBe(0);
    expect(startPairs(/a?b/)).toBeUndefined();
    expect(startPairs(/ab|c/)).toBeUndefined();
    expect(startPairs(/(?:a|b)c/)).toBeUndefined();
    expect(startPairs(/\bab/)).toBeUndefined();
    expect(startPairs(/^ab/)).toBeUndefined();
    expect(startPairs(/a\sb/)).toBeUndefined();
    expect(startPairs(/a{2}b/)).toBeUndefined();
    expect(startPairs(/[ab]c|d\./)).toBeDefined();
  });

  it("never rules out a run whose decoding holds an anchor (random and anchor-dense runs)", () => {
    let held = 0;
    fc.assert(
      fc.property(encodedRun, (run) => {
        const expected = decodedHoldsAnchor(run);
        if (expected) held++;
        if (expected) expect(decodedMayHoldAnchor(run, 0, run.length)).toBe(true);
      }),
      { numRuns: 20000, seed: 43 },
    );
    expect(held).toBeGreaterThan(1000); // the generator does reach anchors
  });

  it("decodes a run without `=` to Buffer's bytes", () => {
    fc.assert(
      fc.property(encodedRun, fc.nat(5), fc.nat(), (encoded, pad, pick) => {
        const run = encoded.replaceAll("=", "");
        const bytes = Buffer.from(run, "base64");
        // Inside a longer text, at any offset: only [start, end) is read.
        const text = `${"x ".repeat(pad)}${run} =`;
        const start = 2 * pad;
        const holds = (pairs: Uint8Array) =>
          decodedHoldsPair(text, start, start + run.length, pairs);
        // A table of every pair but the decoded ones: no hit. One decoded pair: a hit.
        const others = new Uint8Array(65536).fill(1);
        for (let i = 0; i + 1 < bytes.length; i++) others[bytes[i]! * 256 + bytes[i + 1]!] = 0;
        expect(holds(others)).toBe(false);
        if (bytes.length >= 2) {
          const k = pick % (bytes.length - 1);
          const one = new Uint8Array(65536);
          one[bytes[k]! * 256 + bytes[k + 1]!] = 1;
          expect(holds(one)).toBe(true);
        }
        expect(decodedMayHoldAnchor(text, start, start + run.length)).toBe(holdsPair(bytes));
      }),
      { numRuns: 5000, seed: 47 },
    );
  });

  it("answers for the bytes before a `=` and for the bytes past it", () => {
    const hidden = Buffer.from("xx user:sk-").toString("base64"); // eHggdXNlcjpzay0=
    expect(decodedMayHoldAnchor(hidden, 0, hidden.length)).toBe(true);
    const after = `QUJD=${Buffer.from("sk-xxxxxxxx").toString("base64")}`;
    expect(decodedMayHoldAnchor(after, 0, after.length)).toBe(true);
    expect(decodedMayHoldAnchor("QUJD\u00e9QUJD", 0, 9)).toBe(true); // not base64: may hold
  });

  it("rules out the runs a prompt is full of", () => {
    for (const run of [
      "/home/dev/work/acme-agent/src/recorder/recorder",
      "ebede10d4e8eb2af2f26165a881cd424e42a8512",
      noise(64, 3),
    ]) {
      expect(decodedHoldsAnchor(run)).toBe(false);
      expect(decodedMayHoldAnchor(run, 0, run.length), run).toBe(false);
    }
  });
});

describe("the scanner with the filter", () => {
  // The built-in list itself takes the filter; a copy of it takes the exact path
  // (every run decoded, every pattern run on it).
  const filtered = createSecretScanner({ env: {} });
  const unfiltered = createSecretScanner({ env: {}, patterns: [...SECRET_PATTERNS] });
  const piece = fc.oneof(
    encodedRun,
    fc.constantFrom(" ", "\n", ".", "é", "=", "/", "a", "path/to/file", "-"),
    fc.constantFrom(
      ...FAKE_KEYS.map(([, k]) => Buffer.from(`user:${k}`).toString("base64")),
      Buffer.from("postgres://u:hunter2hunter2@db").toString("base64url"),
      Buffer.from("Authorization: Bearer abcdefghij0123456789XYZ").toString("base64"),
    ),
  );
  const text = fc.array(piece, { maxLength: 8 }).map((a) => a.join(" "));

  it("redacts exactly what the unfiltered scan redacts", () => {
    let redacted = 0;
    fc.assert(
      fc.property(text, (t) => {
        const a: never[] = [];
        const b: never[] = [];
        const got = filtered.redactString(t, "$", a);
        expect(got).toBe(unfiltered.redactString(t, "$", b));
        expect(a).toEqual(b);
        if (got !== t) redacted++;
      }),
      { numRuns: 4000, seed: 53 },
    );
    expect(redacted).toBeGreaterThan(400);
  });
});
