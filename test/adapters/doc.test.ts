/**
 * docs/integrations.md cannot drift: every ts block runs as written (against the
 * source, a fake provider on loopback standing in for the vendor), and every
 * section names the tests that prove what it states, each of which exists.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  docBlocks,
  docSections,
  missingTest,
  ROOT,
  runTsBlock,
  testedBy,
} from "../helpers/doc-blocks.js";

const doc = readFileSync(join(ROOT, "docs", "integrations.md"), "utf8");
const PRELUDE = join(ROOT, "test", "helpers", "doc-prelude.ts");
// Framework snippets (`<!-- snippet: NAME -->`) run in test/integrations/doc-snippets.test.ts.
const blocks = docBlocks(doc).filter((b) => b.lang === "ts" && b.snippet === undefined);
const sections = docSections(doc);
const refs = testedBy(doc);

describe("docs/integrations.md", () => {
  it("has code blocks and sections to check", () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(sections.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((b) => [`${b.line} (${b.heading})`, b] as const))(
    "the ts block at line %s runs",
    async (_where, block) => {
      const r = await runTsBlock(block, PRELUDE);
      expect(r.status, `${block.body}\n---\n${r.stderr}`).toBe(0);
    },
    60_000,
  );

  it.each(sections.map((s) => [s.heading, s.text] as const))(
    "section %s names a test for what it states",
    (_heading, text) => {
      expect(testedBy(text).length).toBeGreaterThan(0);
    },
  );

  it("says a failed call gives its occurrence back, and names the tests", () => {
    expect(doc).not.toMatch(/still takes an occurrence/);
    expect(refs.join("\n")).toContain("run-retry.test.ts › SDK retries inside a run");
    expect(refs.join("\n")).toContain("a failed call inside a run gives its occurrence back");
  });

  it("says the adapters use the recorder's identity options, and names the tests", () => {
    expect(doc).not.toMatch(/default home and tmp roots/);
    expect(doc).toMatch(/normalized with the recorder's own `identity` options/);
    const named = refs.filter((r) => r.startsWith("test/adapters/identity-options.test.ts"));
    expect(named.length).toBeGreaterThanOrEqual(3);
  });

  it.each(refs)("names a test that exists: %s", (ref) => {
    expect(missingTest(ref)).toBeUndefined();
  });
});
