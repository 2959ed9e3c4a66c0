/**
 * The kind of call is a seam (docs/architecture.md, "Kinds of call"): only
 * identity's kind table (src/identity/kinds.ts) and the tool recipe it
 * dispatches to (src/identity/tool-manifest.ts) tell a model call from a tool
 * call by its `kind`. Everything else asks the table (`callKind(x)`,
 * `kindOf`, `asToolManifest`…), so a new kind is one table entry plus its
 * recipe and translator, not an edit in every module. This test reads the
 * sources the way a lint rule would and names each line that breaks it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const ALLOWED = new Set(["src/identity/kinds.ts", "src/identity/tool-manifest.ts"]);

/** What only the kind table may write: a test of a call's kind by name, or a cast to a manifest. */
const RULES: ReadonlyArray<{ name: string; re: RegExp }> = [
  { name: "compares a kind by name", re: /\bkind\s*[!=]==?\s*["'](?:tool|model)["']/ },
  { name: "compares a kind by name", re: /["'](?:tool|model)["']\s*[!=]==?\s*[\w.?!]*\bkind\b/ },
  { name: "switches on a kind by name", re: /\bcase\s+["'](?:tool|model)["']\s*:/ },
  { name: "calls isToolKind (use callKind/kindOf)", re: /\bisToolKind\s*\(/ },
  {
    name: "casts to a manifest type (narrow with asToolManifest/asModelManifest)",
    re: /\bas\s+unknown\s+as\s+(?:Manifest|ModelManifest|ToolManifest(?:V1|V2)?)\b/,
  },
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sources(path);
    return d.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every line of `text` that breaks a rule, as `file:line: rule: code`. */
function kindViolations(file: string, text: string): string[] {
  if (ALLOWED.has(file)) return [];
  const out: string[] = [];
  text.split("\n").forEach((line, i) => {
    // A kind a caller passes (`{ kind: "tool", … }`) is a request being built, not a test.
    for (const rule of RULES) {
      if (rule.re.test(line)) out.push(`${file}:${i + 1}: ${rule.name}: ${line.trim()}`);
    }
  });
  return out;
}

describe("the kind of call is a seam", () => {
  it("no module outside identity's kind table tells kinds apart by name", () => {
    const found = sources(join(ROOT, "src")).flatMap((path) =>
      kindViolations(relative(ROOT, path).split("\\").join("/"), readFileSync(path, "utf8")),
    );
    expect(found).toEqual([]);
  });

  it("catches each form it forbids, and lets a request being built pass", () => {
    const file = "src/recorder/example.ts";
    expect(kindViolations(file, 'if (c.kind === "tool") {')).toHaveLength(1);
    expect(kindViolations(file, 'if ("model" !== m.kind) {')).toHaveLength(1);
    expect(kindViolations(file, '  case "tool":')).toHaveLength(1);
    expect(kindViolations(file, "const t = isToolKind(req);")).toHaveLength(1);
    expect(kindViolations(file, "const m = x as unknown as ToolManifest;")).toHaveLength(1);
    expect(kindViolations(file, 'recorder.call({ kind: "tool", name }, fn)')).toEqual([]);
    expect(kindViolations(file, 'if (location.kind === "store") {')).toEqual([]);
    expect(kindViolations("src/identity/kinds.ts", 'if (m.kind === "tool") {')).toEqual([]);
  });
});
