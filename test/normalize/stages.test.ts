/**
 * The table's steps one by one (`normalizationStages`, which the bench times
 * apart to show where normalizePrompt's time goes): composed in order they
 * must be normalizePrompt itself, or the per-step bench rows describe some
 * other pipeline.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildPrompt, PROMPT_OPTIONS } from "../../bench/support/prompt.js";
import { type NormalizeOptions, normalizePrompt } from "../../src/normalize/index.js";
import { normalizationStages } from "../../src/normalize/normalize.js";

// No key shape: only its env value makes it a secret.
const KEY = "zq-3f2504e04f8911d39a0c0305e82c3301";

const composed = (text: string, opts: NormalizeOptions): string => {
  const s = normalizationStages(opts);
  return s.scan(s.secret(s.whitespace(s.nfc(text))));
};

const optionSets: Record<string, NormalizeOptions> = {
  "the bench prompt's roots": PROMPT_OPTIONS,
  "a secret env value": {
    homeDir: "/home/u",
    tmpDirs: ["/tmp"],
    secrets: { env: { MY_API_KEY: KEY } },
  },
  "rules turned off": {
    homeDir: "/home/u",
    tmpDirs: ["/tmp"],
    disableRules: ["whitespace", "uuid", "unicode-nfc"],
  },
  "the secret rule off": { homeDir: "/home/u", tmpDirs: ["/tmp"], secrets: false },
};

const piece = fc.constantFrom(
  "/home/dev/work/acme-agent/src",
  "/home/u/",
  "/tmp/x",
  KEY,
  "Bearer ",
  "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "2026-09-09T14:33:21Z",
  "1767225600000",
  "```ts\n",
  "\n",
  "  ",
  "\t",
  "e\u0301",
  "é",
  "word ",
);
const text = fc.array(piece, { maxLength: 30 }).map((a) => a.join(""));

describe("normalizationStages", () => {
  for (const [name, opts] of Object.entries(optionSets)) {
    it(`compose to normalizePrompt (${name})`, () => {
      fc.assert(
        fc.property(text, (t) => {
          expect(composed(t, opts)).toBe(normalizePrompt(t, opts));
        }),
        { numRuns: 300 },
      );
    });
  }

  it("compose to normalizePrompt on the bench prompt", () => {
    const prompt = buildPrompt(16 * 1024);
    const out = normalizePrompt(prompt, PROMPT_OPTIONS);
    expect(out).not.toBe(prompt); // the prompt has matches: the steps do work
    expect(composed(prompt, PROMPT_OPTIONS)).toBe(out);
  });

  it("run the secret step before the scan, as normalizePrompt does", () => {
    // The key holds a bare UUID: scanned first, it would be cut into pieces.
    const opts = optionSets["a secret env value"]!;
    const s = normalizationStages(opts);
    expect(s.scan(s.secret(`use ${KEY}`))).toBe("use {secret:MY_API_KEY}");
    expect(s.secret(s.scan(`use ${KEY}`))).not.toBe("use {secret:MY_API_KEY}");
  });
});
