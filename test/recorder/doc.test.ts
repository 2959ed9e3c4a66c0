/**
 * docs/recorder.md cannot drift: every ts block runs as written (against the
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

const doc = readFileSync(join(ROOT, "docs", "recorder.md"), "utf8");
const PRELUDE = join(ROOT, "test", "helpers", "doc-prelude.ts");
const blocks = docBlocks(doc).filter((b) => b.lang === "ts");
const sections = docSections(doc);
const refs = testedBy(doc);

describe("docs/recorder.md", () => {
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

  it("says record mode is fail-closed on a store failure, and names the tests", () => {
    const text = sections.find((s) => s.heading === "Store failures")?.text ?? "";
    expect(text).not.toMatch(/`auto` and `record`[^.]*fail-open/);
    expect(text).toMatch(/In `record`[\s\S]*fail-closed/);
    const named = testedBy(text).join("\n");
    for (const mode of ["auto is fail-open", "record is fail-closed", "replay is fail-closed"]) {
      expect(named).toContain(`store-failures.test.ts › store failures by mode › ${mode}`);
    }
  });

  it.each(refs)("names a test that exists: %s", (ref) => {
    expect(missingTest(ref)).toBeUndefined();
  });
});
