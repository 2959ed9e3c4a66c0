/**
 * Issue 31's rule for `as unknown as` in src/: each cast that remains says
 * why, in a comment on its line or just above it (within the statement it
 * belongs to). A cast without one is a claim the compiler cannot check and
 * nobody explained.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");
/** How far above a cast its comment may sit (a multi-line call's first line, its comment). */
const REACH = 8;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? tsFiles(join(dir, d.name))
      : d.name.endsWith(".ts")
        ? [join(dir, d.name)]
        : [],
  );
}

/** `file:line` of every `as unknown as` with no comment on its line or the REACH lines above. */
function unexplainedCasts(files: readonly string[]): string[] {
  const out: string[] = [];
  for (const file of files) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "");
      if (!code.includes("as unknown as")) return;
      if (line.includes("//")) return;
      const above = lines.slice(Math.max(0, i - REACH), i);
      if (above.some((l) => /^\s*(\/\/|\/\*|\*)/.test(l))) return;
      out.push(`${relative(SRC, file)}:${i + 1}`);
    });
  }
  return out;
}

describe("as unknown as casts in src/", () => {
  it("each says why, in a comment on its line or just above", () => {
    expect(unexplainedCasts(tsFiles(SRC))).toEqual([]);
  });
});
