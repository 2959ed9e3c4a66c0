/**
 * docs/normalization.md renders the rule table from the data; these tests keep
 * the two from drifting and check every documented example.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BEGIN_MARKER,
  DOC_PATH,
  END_MARKER,
  renderNormalizationTable,
  squashTables,
  updateNormalizationDoc,
  visible,
} from "../../scripts/render-normalization-doc.js";
import {
  NORMALIZATION_RULES,
  type NormalizeOptions,
  normalizePrompt,
} from "../../src/normalize/index.js";

/** The options every example in the table is written for. */
const EXAMPLE_OPTIONS: NormalizeOptions = {
  projectPath: "/work/run-7",
  homeDir: "/home/alice",
  tmpDirs: ["/tmp"],
  roots: { cache: "/var/cache/ci" },
};

const doc = readFileSync(DOC_PATH, "utf8");

describe("docs/normalization.md", () => {
  it("contains the table rendered from NORMALIZATION_RULES (run scripts/render-normalization-doc.ts)", () => {
    const table = renderNormalizationTable();
    // By content: column padding is the formatter's business.
    expect(squashTables(doc)).toContain(squashTables(`${BEGIN_MARKER}\n${table}\n${END_MARKER}`));
    // And byte for byte, as the script writes it (its layout is biome's).
    expect(updateNormalizationDoc(doc)).toBe(doc);
  });

  it("lists every rule, in table order", () => {
    const table = squashTables(renderNormalizationTable());
    let last = -1;
    for (const rule of NORMALIZATION_RULES) {
      const at = table.indexOf(`| \`${rule.name}\` |`);
      expect(at, rule.name).toBeGreaterThan(last);
      last = at;
    }
  });

  it("shows invisible characters of the examples as escapes", () => {
    expect(visible("cafe\u0301")).toBe('"cafe\\u0301"');
    expect(visible("a\u00a0b\u2028c \ud83d\ude00")).toBe('"a\\u00a0b\\u2028c \ud83d\ude00"');
    expect(visible("\ud800")).toBe('"\\ud800"');
  });
});

describe("rule examples", () => {
  it("every built-in rule has a description and an example", () => {
    for (const rule of NORMALIZATION_RULES) {
      expect(rule.description, rule.name).toBeTruthy();
      expect(rule.example, rule.name).toBeDefined();
    }
  });

  it.each(NORMALIZATION_RULES.map((r) => [r.name, r] as const))(
    "%s: the example input normalizes to its output",
    (_name, rule) => {
      const { input, output } = rule.example!;
      expect(normalizePrompt(input, EXAMPLE_OPTIONS)).toBe(output);
      // Examples show one rule at work: the output is already normal.
      expect(normalizePrompt(output, EXAMPLE_OPTIONS)).toBe(output);
    },
  );
});
