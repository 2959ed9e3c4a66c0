/**
 * Cold start: importing the package root loads neither the `yaml` parser
 * and emitter, nor `diff`, nor the price table, nor the pure-JS SHA-256
 * (node:crypto is there). Each costs a noticeable part
 * of a process's start and none is needed to replay from a cassette in the
 * form our writer emits: they are loaded on first use. Checked in a fresh
 * process, through both ways a package can be loaded (an ESM loader hook,
 * and the CommonJS cache), with a control that the same check sees them
 * once they are used.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { moduleLog } from "../helpers/module-log.js";
import { tempDir } from "./helpers.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dir = tempDir("root-import");

/** Packages the root must not load (by their folder under node_modules). */
const LAZY = ["yaml", "diff", "@pydantic/genai-prices", "@noble/hashes"];

function packagesIn(paths: string[]): string[] {
  const found = new Set<string>();
  for (const p of paths) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p.replaceAll("\\", "/"));
    if (m !== null) found.add(m[1]!);
  }
  return [...found].sort();
}

describe("importing the package root", () => {
  it("loads neither yaml, nor diff, nor the price table, nor @noble/hashes; using them loads them", () => {
    // Every module the ESM loader loads, appended from the hooks thread.
    const { log, register } = moduleLog(dir);
    const script = join(dir, "child.mjs");
    writeFileSync(
      script,
      `import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const cjs = () => Object.keys(require.cache).map((p) => "cjs " + p).join("\\n") + "\\n";
const root = await import(${JSON.stringify(pathToFileURL(join(root, "src/index.ts")).href)});
appendFileSync(${JSON.stringify(log)}, cjs() + "--- used\\n");
// The control: the same check sees each package once it is used.
const { invocationManifest } = root;
const a = invocationManifest({ role: "r", model: "m", prompt: "add two and two" });
const b = invocationManifest({ role: "r", model: "m", prompt: "add three and two" });
if (root.explainIdentity(a, b).length === 0) throw new Error("no difference explained");
const cassette = await import(${JSON.stringify(pathToFileURL(join(root, "src/cassette/index.ts")).href)});
// A comment leaves the fast reader's subset: the full parser reads it.
cassette.parseCassette("invocache: 1 # hand edit\\nentries: []\\n", { file: "x", display: "x", url: "cassette://x" });
const usage = await import(${JSON.stringify(pathToFileURL(join(root, "src/usage/index.ts")).href)});
usage.costOf("gpt-4o", { shape: "openai.chat", inputTokens: 10, outputTokens: 10 });
// The pure-JS SHA-256 is for runtimes without node:crypto: here it loads only when asked for.
const sha = await import(${JSON.stringify(pathToFileURL(join(root, "src/identity/sha256.ts")).href)});
await sha.preloadNobleSha256();
appendFileSync(${JSON.stringify(log)}, cjs());
`,
    );
    execFileSync(process.execPath, ["--import", "tsx", "--import", register, script], {
      cwd: root,
      stdio: "pipe",
    });
    const [before, after] = readFileSync(log, "utf8").split("--- used\n") as [string, string];
    const atImport = packagesIn(before.split("\n"));
    expect(atImport.length).toBeGreaterThan(0); // the check sees packages at all
    for (const name of LAZY) expect(atImport, name).not.toContain(name);
    const onUse = packagesIn(after.split("\n"));
    for (const name of LAZY) expect(onUse, name).toContain(name);
  });
});
