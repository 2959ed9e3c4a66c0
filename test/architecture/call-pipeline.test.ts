/**
 * docs/recorder.md, "The call pipeline", and src/recorder/pipeline.ts say the
 * same thing: every step of the doc's table is imported by the pipeline from
 * the file the table names, and the pipeline first calls the steps in the
 * table's order (it reads top to bottom). Steps do not call each other: no
 * step module imports another step module, and none takes the whole `Core`
 * (each names what it needs as a `Pick<Core, …>`). Either file changed
 * alone fails here.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const RECORDER = join(ROOT, "src/recorder");

interface Step {
  name: string;
  file: string;
}

/** The rows of the doc's step table, in order: `| n | step | \`file.ts\` | what it decides |`. */
function documentedSteps(): Step[] {
  const doc = readFileSync(join(ROOT, "docs/recorder.md"), "utf8");
  const start = doc.indexOf("## The call pipeline");
  expect(start, 'docs/recorder.md has a "## The call pipeline" section').toBeGreaterThanOrEqual(0);
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const steps: Step[] = [];
  for (const line of section.split("\n")) {
    const m = /^\|\s*\d+\s*\|\s*([^|]+?)\s*\|\s*`([a-z-]+\.ts)`\s*\|/.exec(line);
    if (m !== null) steps.push({ name: m[1]!, file: m[2]! });
  }
  return steps;
}

/** The value names a source imports from `./<file>.js` (type-only imports excluded). */
function valueImports(source: string, file: string): string[] {
  const from = `"./${file.replace(/\.ts$/, ".js")}"`;
  const names: string[] = [];
  for (const m of source.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+("[^"]+")/g)) {
    if (m[3] !== from || m[1] !== undefined) continue;
    for (const part of m[2]!.split(",")) {
      const name = part.trim();
      if (name !== "" && !name.startsWith("type ")) names.push(name.split(/\s+as\s+/).pop()!);
    }
  }
  return names;
}

/** The relative modules a source imports, as file names (`./lookup.js` → `lookup.ts`). */
function relativeImports(source: string): string[] {
  return [...source.matchAll(/from\s+"\.\/([a-z-]+)\.js"/g)].map((m) => `${m[1]}.ts`);
}

/** Where the body (after the imports) first calls or reads one of `names`, or -1. */
function firstUse(source: string, names: string[]): number {
  const bodyStart = source.lastIndexOf("\nimport ");
  const body = source.slice(source.indexOf(";", bodyStart));
  let first = -1;
  for (const name of names) {
    const at = body.search(new RegExp(`\\b${name}\\s*\\(`));
    if (at !== -1 && (first === -1 || at < first)) first = at;
  }
  return first;
}

describe("the call pipeline reads top to bottom (docs/recorder.md)", () => {
  const steps = documentedSteps();
  const pipelinePath = join(RECORDER, "pipeline.ts");

  it("the doc lists the steps, each in a file of src/recorder", () => {
    expect(steps.map((s) => s.name)).toEqual([
      "side-effect rule",
      "route by mode",
      "lookup",
      "replay miss",
      "share",
      "lease",
      "upstream",
      "record",
      "verify",
    ]);
    for (const s of steps) expect(existsSync(join(RECORDER, s.file)), s.file).toBe(true);
  });

  it("pipeline.ts imports every step from its file and calls them in the doc's order", () => {
    expect(existsSync(pipelinePath), "src/recorder/pipeline.ts").toBe(true);
    const pipeline = readFileSync(pipelinePath, "utf8");
    const uses = steps.map((s) => {
      const names = valueImports(pipeline, s.file);
      expect(names, `pipeline.ts imports the ${s.name} step from ${s.file}`).not.toEqual([]);
      const at = firstUse(pipeline, names);
      expect(at, `pipeline.ts calls the ${s.name} step (${names.join(", ")})`).toBeGreaterThan(-1);
      return { step: s.name, at };
    });
    const inCodeOrder = [...uses].sort((a, b) => a.at - b.at).map((u) => u.step);
    expect(inCodeOrder).toEqual(steps.map((s) => s.name));
  });

  it("no step module imports another, and none takes the whole Core", () => {
    const files = new Set(steps.map((s) => s.file));
    const found: string[] = [];
    for (const file of files) {
      const source = readFileSync(join(RECORDER, file), "utf8");
      for (const imported of relativeImports(source)) {
        if (imported !== file && files.has(imported)) found.push(`${file} imports ${imported}`);
      }
      source.split("\n").forEach((line, i) => {
        if (/:\s*Core\b/.test(line)) found.push(`${file}:${i + 1} takes the whole Core: ${line}`);
      });
    }
    expect(found).toEqual([]);
  });

  it("the checks catch what they forbid", () => {
    const source =
      'import { lookup, hitFrom as hf } from "./lookup.js";\nimport type { X } from "./record.js";\n\nlookup(core, c);';
    expect(valueImports(source, "lookup.ts")).toEqual(["lookup", "hf"]);
    expect(valueImports(source, "record.ts")).toEqual([]);
    expect(relativeImports(source)).toEqual(["lookup.ts", "record.ts"]);
    expect(firstUse(source, ["lookup"])).toBeGreaterThan(-1);
    expect(firstUse(source, ["hf"])).toBe(-1);
  });
});
