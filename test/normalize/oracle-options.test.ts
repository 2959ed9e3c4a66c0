/**
 * The oracle over every option combination (issue 32 §4): `normalizePrompt`
 * equals the one-regex-per-rule reference (test/reference) on random
 * rule-dense text holding paths under every root, UUIDs, timestamps, epoch
 * millis, fences, whitespace of every kind, key shapes and an environment
 * secret in several spellings, under any set of rules turned off, roots
 * given or left out, the secret rule off, on by default or over a given
 * environment, and a caller rule. Any faster normalizer (a single pass)
 * must keep this test passing; it is the statement of "byte-identical".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type NormalizeOptions, normalizePrompt } from "../../src/normalize/index.js";
import { DISABLEABLE_RULES } from "../../src/normalize/internal.js";
import { referenceNormalize } from "../reference/normalize-reference.js";

const ENV_SECRET = "t0k3nVALUE-9f8e7d6c5b4a3210zz";
const ENV = { MY_SERVICE_TOKEN: ENV_SECRET };

const piece = fc.constantFrom(
  "/work/run-7",
  "/work/run-7/src/a.ts",
  "/home/u",
  "/home/u/.npmrc",
  "/home/u2",
  "/tmp",
  "/tmp/x-1/out.json",
  "/var/cache/ci",
  "C:\\Users\\Me\\proj",
  "c:/users/me/PROJ",
  "file://",
  "/",
  "\\",
  ".",
  "-",
  ":",
  "=",
  "T",
  " ",
  "  ",
  "\n",
  "\n\n",
  "\t",
  "\r\n",
  "\u00a0",
  "\u2028",
  "```",
  "```ts\n",
  "~~~",
  "\n```\n",
  "    ",
  "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "3F2504E04F8911D39A0C0305E82C3301",
  "d41d8cd98f00b204e9800998ecf8427e",
  "2026-09-09T14:33:21.5Z",
  "2026-09-09 14:33",
  "2026-09-09",
  "+05:30",
  "1767225600000",
  "9780262033848",
  "é",
  "e\u0301",
  "\ud800",
  "{uuid}",
  "{secret:X}",
  "x",
  "key",
  // Key shapes and an environment secret, raw and encoded.
  "sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2",
  "ghp_0123456789abcdefghijABCDEFGHIJ012345",
  "AKIAIOSFODNN7EXAMPLE",
  "Bearer abc123def456ghi789jkl",
  "Authorization: Basic dXNlcjpzay1wcm9qLWExQjJjM0Q0ZTVGNmc3SDhpOUowazFMMg==",
  "https://user:hunter2pass@db.example.com/x",
  "password=Sup3rS3cret!",
  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  ENV_SECRET,
  encodeURIComponent(`${ENV_SECRET}/+`),
  Buffer.from(ENV_SECRET).toString("base64"),
  JSON.stringify(ENV_SECRET).slice(1, -1),
  "%2Fhome%2Fu",
);
const text = fc.array(piece, { maxLength: 48 }).map((a) => a.join(""));

const rootChoices: NormalizeOptions[] = [
  {},
  { projectPath: "/work/run-7" },
  { projectPath: "/work/run-7", homeDir: "/home/u", tmpDirs: ["/tmp"] },
  {
    projectPath: "/work/run-7",
    homeDir: "/home/u",
    tmpDirs: ["/tmp"],
    roots: { cache: "/var/cache/ci", win: "C:\\Users\\Me\\proj" },
  },
];
const secretChoices: NormalizeOptions["secrets"][] = [undefined, false, { env: ENV }];
const callerRules = [
  undefined,
  [{ name: "ticket", pattern: /JIRA-\d+|key/g, replacement: "{ticket}" }],
];

const options: fc.Arbitrary<NormalizeOptions> = fc
  .record({
    roots: fc.nat(rootChoices.length - 1),
    off: fc.subarray([...DISABLEABLE_RULES, "root:cache"]),
    secrets: fc.nat(secretChoices.length - 1),
    rules: fc.nat(callerRules.length - 1),
  })
  .map(({ roots, off, secrets, rules }) => ({
    // The home and tmp defaults come from this machine: pinned when not given.
    homeDir: "/nonexistent-home",
    tmpDirs: [],
    ...rootChoices[roots]!,
    disableRules: off,
    secrets: secretChoices[secrets],
    rules: callerRules[rules],
  }));

describe("normalizePrompt against the reference, every option combination", () => {
  it("equals the reference on rule-dense text with secrets and fences", () => {
    fc.assert(
      fc.property(text, options, (t, o) => {
        expect(normalizePrompt(t, o)).toBe(referenceNormalize(t, o));
      }),
      { numRuns: 4000, seed: 32 },
    );
  });

  it("equals the reference on random seeds too", () => {
    fc.assert(
      fc.property(text, options, (t, o) => {
        expect(normalizePrompt(t, o)).toBe(referenceNormalize(t, o));
      }),
      { numRuns: Number(process.env.ORACLE_RUNS ?? 1500) },
    );
  });

  it("the texts really exercise the rules: each setting changes some output", () => {
    const sample = fc.sample(text, { numRuns: 300, seed: 5 });
    const base = { homeDir: "/home/u", tmpDirs: ["/tmp"], projectPath: "/work/run-7" };
    const differs = (o: NormalizeOptions) =>
      sample.some((t) => normalizePrompt(t, base) !== normalizePrompt(t, { ...base, ...o }));
    for (const rule of DISABLEABLE_RULES.filter((r) => r !== "root:<name>")) {
      expect(differs({ disableRules: [rule] }), rule).toBe(true);
    }
    expect(differs({ secrets: false })).toBe(true);
    expect(differs({ secrets: { env: ENV } })).toBe(true);
  });
});
