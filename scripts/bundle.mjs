// The JavaScript half of `npm run build` (the other half, `tsc -p
// tsconfig.build.json`, writes only the declarations dist/**/*.d.ts).
// Bundles src/ with esbuild into one ESM file per entry point of
// package.json's "exports" and "bin", at the paths those fields name, with
// the code they share in dist/chunks/. Why: a process that imports invocache
// otherwise loads ~130 modules one by one, and under a loader hook (tsx,
// vitest) each is a round trip through the hooks thread; loading a handful
// of files instead is most of the cold-start gap (docs/performance.md).
//
// `splitting` is what keeps ONE instance of each module: a module reached
// from two entries is emitted once, in a chunk both import, so classes
// (`instanceof InvocacheError`) and module-level state are shared by every
// subpath, as they were with one file per module. Every dependency and
// optional peer stays an import (`packages: "external"`), so what the root
// loads lazily (yaml, diff, the price table, the peers) stays lazy.
//
//   node scripts/bundle.mjs     after tsc -p tsconfig.build.json
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const dist = join(root, "dist");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** `./dist/a/b.js` → `src/a/b.ts`: every entry's source, from the manifest itself. */
function sourceOf(target) {
  const m = /^\.\/dist\/(.+)\.js$/.exec(target);
  if (m === null) throw new Error(`bundle: ${target} is not a ./dist/**/*.js path`);
  return join(root, "src", `${m[1]}.ts`);
}

const targets = [
  ...Object.values(pkg.exports)
    .filter((t) => typeof t === "object" && t !== null)
    .map((t) => t.import),
  ...Object.values(pkg.bin),
];
const entryPoints = [...new Set(targets)].map(sourceOf);
const rootEntry = sourceOf(pkg.exports["."].import);

// Every other entry imports the root first. esbuild puts code in one chunk
// per set of entries that reach it, so with ~15 subpaths each reaching a
// different part of the root's modules, the root's code was cut into ~28
// chunks, and a process importing the root loaded 29 files. Reached from
// every entry, the root's modules form one set: the root loads a handful
// of files (test/build/bundle.test.ts counts them), and a subpath loads the
// root with it (every subpath is used beside the root; the root loads no
// package at import). The import is kept alive by a use, since
// "sideEffects": false would let a bare import be dropped.
const rootFirst = {
  name: "root-first",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path === rootEntry || !entryPoints.includes(args.path)) return undefined;
      const text = readFileSync(args.path, "utf8");
      const afterShebang = text.startsWith("#!") ? text.indexOf("\n") + 1 : 0;
      const use = `import * as invocacheRoot from ${JSON.stringify(rootEntry)};\nif (invocacheRoot === undefined) throw new Error("invocache: the root module is missing");\n`;
      return {
        contents: text.slice(0, afterShebang) + use + text.slice(afterShebang),
        loader: "ts",
        resolveDir: dirname(args.path),
      };
    });
  },
};

// What tsc (or an earlier build) left: every .js and .js.map in dist/ goes,
// so no per-module file a deep import could still reach survives beside the
// bundle. The declarations (.d.ts, .d.ts.map) stay: they are tsc's output.
function removeJs(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) removeJs(p);
    else if (name.endsWith(".js") || name.endsWith(".js.map")) rmSync(p);
  }
}
rmSync(join(dist, "chunks"), { recursive: true, force: true });
removeJs(dist);

const result = await build({
  absWorkingDir: root,
  entryPoints,
  outbase: "src",
  outdir: "dist",
  entryNames: "[dir]/[name]",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  // Source maps point into src/, which the package ships (package.json
  // "files"), so stack traces and debuggers land on the TypeScript; the
  // sources are not inlined a second time.
  sourcemap: true,
  sourcesContent: false,
  // Class and function names as written: error classes and anything that
  // prints a constructor's name must not read `InvocacheError2`.
  keepNames: true,
  legalComments: "none",
  logLevel: "warning",
  plugins: [rootFirst],
});
if (result.errors.length > 0) process.exit(1);

// Quiet on success (`npm run demo` prints its story right after); the
// layout is checked by test/build/bundle.test.ts.
