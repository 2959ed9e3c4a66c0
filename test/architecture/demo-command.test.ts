/**
 * `invocache demo` reads as its steps (issue 31): its command module holds
 * the help and a short `run` that calls the steps in src/cli/demo/ in
 * order, and it imports no other command module (what it shares with
 * `verify` lives in src/cli/verify-reports.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const source = readFileSync(join(ROOT, "src/cli/commands/demo.ts"), "utf8");

describe("the demo command", () => {
  it("imports no other command module", () => {
    const imports = [...source.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1]!);
    expect(imports.filter((p) => p.startsWith("./"))).toEqual([]);
  });

  it("keeps its run short: the steps live in src/cli/demo/", () => {
    const start = source.indexOf("async run(");
    expect(start).toBeGreaterThan(-1);
    const lines = source.slice(start).split("\n");
    const end = lines.indexOf("  },");
    expect(end, "run ends at the object's closing `  },`").toBeGreaterThan(0);
    expect(end + 1).toBeLessThanOrEqual(60);
  });
});
