/**
 * Every error code src/ throws is documented: docs/errors.md has one table
 * row per code, and every row names a code src/ still has. A new code added
 * without its row, or a row left behind by a removed code, fails here.
 * Node's own codes, which src/ compares but never throws, are named in the
 * doc's text and left out of the table.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

/** Codes of Node.js that src/ reads off errors Node throws; never thrown by invocache. */
const NODE_CODES = new Set([
  "ERR_MODULE_NOT_FOUND",
  "ERR_PARSE_ARGS_UNKNOWN_OPTION",
  "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sources(path);
    return d.name.endsWith(".ts") ? [path] : [];
  });
}

/** The `"ERR_…"` string literals of a source, with where each is. */
function codesIn(text: string): string[] {
  return [...text.matchAll(/["'`](ERR_[A-Z0-9_]+)["'`]/g)].map((m) => m[1]!);
}

/** The codes of the doc's table: the first cell of each row, in backticks. */
function documentedCodes(doc: string): string[] {
  return [...doc.matchAll(/^\|\s*`(ERR_[A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]!);
}

describe("error codes (docs/errors.md)", () => {
  const doc = readFileSync(join(ROOT, "docs/errors.md"), "utf8");
  const where = new Map<string, string>();
  for (const path of sources(join(ROOT, "src"))) {
    for (const code of codesIn(readFileSync(path, "utf8"))) {
      if (!where.has(code)) where.set(code, relative(ROOT, path));
    }
  }

  it("every error code src/ throws is a row of docs/errors.md, and every row a code src/ has", () => {
    const documented = documentedCodes(doc);
    expect(new Set(documented).size, "one row per code").toBe(documented.length);
    const thrown = [...where.keys()].filter((c) => !NODE_CODES.has(c));
    const missing = thrown
      .filter((c) => !documented.includes(c))
      .map((c) => `${c} (${where.get(c)})`);
    expect(missing, "codes src/ has that docs/errors.md does not list").toEqual([]);
    const stale = documented.filter((c) => !where.has(c));
    expect(stale, "rows of docs/errors.md whose code src/ no longer has").toEqual([]);
    for (const code of NODE_CODES) expect(doc, `${code} named as Node's`).toContain(code);
  });

  it("reads codes the way they are written", () => {
    expect(codesIn(`super("ERR_STORE", m); const c = 'ERR_X_1'; // ERR_NOT_QUOTED`)).toEqual([
      "ERR_STORE",
      "ERR_X_1",
    ]);
    expect(documentedCodes("| `ERR_A` | x |\n| code | class |\n|  `ERR_B_2`  | y |")).toEqual([
      "ERR_A",
      "ERR_B_2",
    ]);
  });
});
