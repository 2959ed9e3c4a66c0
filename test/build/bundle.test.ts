/**
 * The built package as `npm run build` leaves it: tsc's declarations beside
 * esbuild's bundle (scripts/bundle.mjs), one file per entry point of
 * package.json's "exports" and "bin" and the code they share in dist/chunks/.
 * Each check runs the built files in a fresh plain `node` process, as a
 * user's process loads them: the layout, one module instance behind every
 * subpath (shared classes and module-level state), the root still leaving
 * yaml / diff / the price table unloaded, and the CLI finding its version.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { moduleLog } from "../helpers/module-log.js";
import { tempDir } from "../helpers/tmp.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dist = join(root, "dist");
const chunks = `${join(dist, "chunks")}/`;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  exports: Record<string, string | { types: string; import: string }>;
  bin: Record<string, string>;
};
const subpaths = Object.entries(pkg.exports).flatMap(([k, v]) =>
  typeof v === "object"
    ? [{ subpath: k, js: join(root, v.import), types: join(root, v.types) }]
    : [],
);
const url = (subpath: string) => {
  const found = subpaths.find((s) => s.subpath === subpath);
  if (found === undefined) throw new Error(`no export ${subpath}`);
  return pathToFileURL(found.js).href;
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

function newest(dir: string): number {
  return Math.max(...files(dir).map((p) => statSync(p).mtimeMs));
}

/** `npm run build`'s two steps, when dist/ is missing, older than src/ or not bundled (npm test builds first). */
function ensureBuilt(): void {
  const entry = join(dist, "index.js");
  const fresh = existsSync(entry) && statSync(entry).mtimeMs >= newest(join(root, "src"));
  if (fresh && existsSync(chunks)) return; // (no chunks: tsc alone wrote dist/)
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "pipe" });
  execFileSync(process.execPath, [join(root, "scripts", "bundle.mjs")], {
    cwd: root,
    stdio: "pipe",
  });
}

/** Run `code` as an ES module in a fresh `node`; its stdout. */
function runModule(code: string, args: string[] = []): string {
  const dir = tempDir("bundle");
  const script = join(dir, "child.mjs");
  writeFileSync(script, code);
  const r = spawnSync(process.execPath, [...args, script], { cwd: dir, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

beforeAll(ensureBuilt, 300_000);

describe("the bundled build", () => {
  it("puts one file per exports/bin entry at its path, shared code in dist/chunks/, and nothing else", () => {
    const entries = new Set([
      ...subpaths.map((s) => s.js),
      ...Object.values(pkg.bin).map((b) => join(root, b)),
    ]);
    for (const s of subpaths) {
      expect(existsSync(s.js), s.js).toBe(true);
      expect(existsSync(s.types), s.types).toBe(true);
    }
    const js = files(dist).filter((p) => p.endsWith(".js"));
    const stray = js.filter((p) => !entries.has(p) && !p.startsWith(chunks));
    expect(stray.map((p) => relative(root, p))).toEqual([]);
    // tsc's per-module JavaScript is gone, its declarations stay.
    expect(existsSync(join(dist, "errors.js"))).toBe(false);
    expect(existsSync(join(dist, "errors.d.ts"))).toBe(true);
    // Source maps beside every file, pointing into the shipped src/.
    for (const p of js) expect(existsSync(`${p}.map`), p).toBe(true);
    const sources = js.flatMap((p) =>
      (JSON.parse(readFileSync(`${p}.map`, "utf8")) as { sources: string[] }).sources.map((s) =>
        join(p, "..", s),
      ),
    );
    expect(sources).toContain(join(root, "src", "errors.ts"));
    for (const s of sources) expect(existsSync(s), s).toBe(true);
    for (const b of Object.values(pkg.bin)) {
      expect(readFileSync(join(root, b), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    }
  });

  it("shares one instance of each module across subpaths: classes, functions and module state", () => {
    const out = runModule(`
const rootMod = await import(${JSON.stringify(url("."))});
const cassette = await import(${JSON.stringify(url("./cassette"))});
const store = await import(${JSON.stringify(url("./store"))});
const normalize = await import(${JSON.stringify(url("./normalize"))});
const report = {};
// A typed error thrown by one subpath is an instance of the root's classes.
try {
  cassette.parseCassette("invocache: 99\\nentries: []\\n", { file: "x.yaml", display: "x.yaml", url: "cassette://x" });
  report.threw = false;
} catch (e) {
  report.threw = true;
  report.name = e.name;
  report.isInvocacheError = e instanceof rootMod.InvocacheError;
  report.isCassetteError = e instanceof rootMod.CassetteError;
  report.isStoreError = e instanceof rootMod.StoreError;
}
// The same export through two subpaths is the same function.
report.sameFunction = cassette.parseMaxAge === store.parseMaxAge && normalize.normalizePrompt === rootMod.normalizePrompt;
// Module-level state: the default secret scanner is a snapshot of process.env
// taken on first use; refreshing it through the normalize subpath must
// refresh the one the root's normalizePrompt uses.
const secret = "Zq9Xv8Wu7Ts6Bundle42";
const text = "call with " + secret;
rootMod.normalizePrompt(text);
process.env.BUNDLE_TEST_TOKEN = secret;
report.staleSnapshot = rootMod.normalizePrompt(text).includes(secret);
normalize.refreshSecretEnv();
report.refreshedByOtherSubpath = rootMod.normalizePrompt(text) === "call with {secret:BUNDLE_TEST_TOKEN}";
console.log(JSON.stringify(report));
`);
    expect(JSON.parse(out)).toEqual({
      threw: true,
      name: "CassetteError",
      isInvocacheError: true,
      isCassetteError: true,
      isStoreError: true,
      sameFunction: true,
      staleSnapshot: true,
      refreshedByOtherSubpath: true,
    });
  });

  it("loads the root from a handful of files and leaves yaml, diff, the price table and @noble/hashes unloaded until used", () => {
    const dir = tempDir("bundle-hooks");
    // Every module the ESM loader loads, appended from the hooks thread.
    const { log, register } = moduleLog(dir);
    runModule(
      `import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const cjs = () => Object.keys(require.cache).map((p) => "cjs " + p).join("\\n") + "\\n";
const rootMod = await import(${JSON.stringify(url("."))});
appendFileSync(${JSON.stringify(log)}, cjs() + "--- used\\n");
const a = rootMod.invocationManifest({ role: "r", model: "m", prompt: "add two and two" });
const b = rootMod.invocationManifest({ role: "r", model: "m", prompt: "add three and two" });
if (rootMod.explainIdentity(a, b).length === 0) throw new Error("no difference explained");
const cassette = await import(${JSON.stringify(url("./cassette"))});
cassette.parseCassette("invocache: 1 # hand edit\\nentries: []\\n", { file: "x", display: "x", url: "cassette://x" });
appendFileSync(${JSON.stringify(log)}, cjs());
`,
      ["--import", register],
    );
    const [before, after] = readFileSync(log, "utf8").split("--- used\n") as [string, string];
    const packages = (text: string) =>
      new Set(
        [...text.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1] as string),
      );
    const atImport = packages(before);
    // (The control below shows the check sees packages: the root itself now loads none.)
    for (const name of ["yaml", "diff", "@pydantic/genai-prices", "@noble/hashes"]) {
      expect(atImport.has(name), name).toBe(false);
    }
    // The control: the same check sees them once used (the price table has
    // no public entry of its own; yaml and diff show both load paths work).
    const onUse = packages(after);
    for (const name of ["yaml", "diff"]) expect(onUse.has(name), name).toBe(true);
    // The package's own files the root loads: its entry and shared chunks only.
    const own = [...before.matchAll(/^esm (file:\S+)$/gm)]
      .map((m) => fileURLToPath(m[1] as string))
      .filter((p) => p.startsWith(`${dist}/`));
    expect(own).toContain(join(dist, "index.js"));
    // Every subpath imports the root first (scripts/bundle.mjs), so the
    // root's code is not cut into a chunk per subpath that shares a part of
    // it: 7 files today, 29 before.
    expect(own.length, own.join("\n")).toBeLessThanOrEqual(10);
    for (const p of own) {
      expect(p === join(dist, "index.js") || p.startsWith(chunks), p).toBe(true);
    }
  });

  it("runs the CLI from its bin path, reading the version from the package's manifest", () => {
    const bin = join(root, pkg.bin.invocache as string);
    const r = spawnSync(process.execPath, [bin, "--version"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe(pkg.version);
  });
});
