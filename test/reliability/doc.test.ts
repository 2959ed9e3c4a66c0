/**
 * docs/reliability.md names, for every guarantee, the test that proves it
 * (`file › describe › test`). Each name must exist, so a renamed or
 * deleted test cannot leave a guarantee unproven without this failing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers.js";

const doc = readFileSync(join(ROOT, "docs", "reliability.md"), "utf8");
/** `file.test.ts › a › b` references, whole or with `…` for parts left out. */
const refs = [...doc.matchAll(/`([\w./-]+\.test\.ts(?: › [^`\n]+)?)`/g)].map((m) => m[1]!);

describe("docs/reliability.md", () => {
  it("names at least one test for each guarantee section", () => {
    expect(refs.length).toBeGreaterThanOrEqual(30);
  });

  it.each(refs)("names a test that exists: %s", (ref) => {
    const [file, ...names] = ref.split(" › ");
    const path = file!.startsWith("test/")
      ? join(ROOT, file!)
      : join(ROOT, "test", "reliability", file!);
    expect(existsSync(path), path).toBe(true);
    const source = readFileSync(path, "utf8");
    for (const name of names) {
      if (name === "…" || name.startsWith("<")) continue; // a part left out, or "<target>"
      const text = name.endsWith("…") ? name.slice(0, -1) : name;
      expect(source.includes(text), `${file}: "${text}"`).toBe(true);
    }
  });
});
