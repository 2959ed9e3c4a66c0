/**
 * Every shipped example runs from the installed package: each relative
 * import of each example in the packed file list (`npm pack --dry-run`, the
 * real packer) resolves to a file that is packed too. The examples' local
 * model (test/fake-provider) ships with them for that reason.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

describe("shipped examples", () => {
  it("import nothing the package does not ship", () => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const out = execFileSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: root,
      encoding: "utf8",
    });
    const packed = new Set(
      (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path),
    );
    const examples = [...packed].filter((p) => p.startsWith("examples/") && p.endsWith(".ts"));
    expect(examples.length).toBeGreaterThan(5);
    const missing: string[] = [];
    for (const file of examples) {
      const text = readFileSync(join(root, file), "utf8");
      for (const m of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const target = posix.normalize(posix.join(dirname(file), m[1]!));
        // Sources import `.js` names of `.ts` files (NodeNext); `src` ships as both.
        const candidates = [target, target.replace(/\.js$/, ".ts")];
        if (!candidates.some((c) => packed.has(c))) missing.push(`${file} → ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  }, 120_000);
});
