/**
 * docs/architecture.md and .dependency-cruiser.cjs say the same thing: every
 * rule of the config is named on the page (in "Rules the layering check
 * enforces") and every rule the page names is in the config; every module
 * under src/ is a row of the layers table, every row is a module, and every
 * module a rule names exists. Either file changed alone fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
const config = createRequire(import.meta.url)(join(ROOT, ".dependency-cruiser.cjs")) as {
  forbidden: Array<{ name: string; from: unknown; to: unknown }>;
};

function section(title: string): string {
  const start = doc.indexOf(`## ${title}`);
  expect(start, `docs/architecture.md has a "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

/** The rule names the page lists: the `kebab-case` names in parentheses after each bold rule. */
function documentedRules(): string[] {
  const rules = section("Rules the layering check enforces");
  const names = new Set<string>();
  for (const m of rules.matchAll(/\*\*[^*]+\*\*\s*\(([^)]*)\)/g)) {
    for (const n of m[1]!.matchAll(/`([a-z0-9-]+)`/g)) names.add(n[1]!);
  }
  return [...names].sort();
}

/** The modules of the layers table: each `src/<name>/` (or `src/<file>.ts`) in its module column. */
function documentedModules(): string[] {
  const table = section("Layers and homes");
  const out = new Set<string>();
  for (const line of table.split("\n")) {
    const cells = line.split("|");
    if (cells.length < 4) continue;
    for (const m of cells[2]!.matchAll(/`src\/([^`]+?)\/?`/g)) out.add(m[1]!);
  }
  return [...out].sort();
}

/** What is under src/: each folder, and each top-level file. */
function actualModules(): string[] {
  return readdirSync(join(ROOT, "src"), { withFileTypes: true })
    .map((d) => d.name)
    .filter((n) => !n.startsWith("."))
    .sort();
}

/** Module names the config's paths mention: `src/(a|b)/`, `src/a/`, `src/a\.ts`. */
function modulesInConfig(): string[] {
  const text = JSON.stringify(config.forbidden.map((r) => [r.from, r.to]));
  const out = new Set<string>();
  for (const m of text.matchAll(/src\/\(?([a-z|-]+)\)?\//g)) {
    for (const n of m[1]!.split("|")) if (n !== "") out.add(n);
  }
  for (const m of text.matchAll(/src\/\(?([a-z|]+)\)?\\\\\.ts/g)) {
    for (const n of m[1]!.split("|")) if (n !== "") out.add(`${n}.ts`);
  }
  return [...out].sort();
}

describe("docs/architecture.md is in step with .dependency-cruiser.cjs", () => {
  it("names every rule of the config, and no rule the config lacks", () => {
    const inConfig = config.forbidden.map((r) => r.name).sort();
    expect(documentedRules()).toEqual(inConfig);
  });

  it("lists every module under src/ in the layers table, and nothing else", () => {
    expect(documentedModules()).toEqual(actualModules());
  });

  it("has rules only about modules that exist", () => {
    const actual = new Set(actualModules());
    expect(modulesInConfig().filter((m) => !actual.has(m))).toEqual([]);
  });
});
