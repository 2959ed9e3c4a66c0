/**
 * The child harness as a user's process runs a tool: plain `node`, no tsx.
 * child.ts (with tools.ts, workload.ts and the prompt builder) is bundled
 * once per bench run by esbuild into one ES module; every package stays an
 * external import resolved from node_modules (nock, Polly, openai as they
 * ship), and invocache is imported from its compiled package (dist/), the
 * file a user's `import "invocache"` loads, never inlined from src/. Every
 * tool runs under this same harness, so the comparison stays fair: under
 * `--import tsx` each ES module import made a round trip to tsx's loader
 * thread, which invocache's ESM files paid and CommonJS nock mostly did not.
 *
 * dist/ must be current: `distEntry()` builds it (`npm run build`) when any
 * source file is newer than it, and says so.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");

/** The environment variable tools.ts reads: the file URL of invocache's entry to import. */
export const ENTRY_ENV = "INVOCACHE_BENCH_ENTRY";

function newestUnder(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isDirectory()) newest = Math.max(newest, newestUnder(path));
    else newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The file `import "invocache"` loads: package.json's `exports["."].import` (dist/index.js today). */
function packageEntry(): string {
  const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
    exports?: { "."?: { import?: unknown } };
  };
  const entry = pkg.exports?.["."]?.import;
  return join(repo, typeof entry === "string" ? entry : "dist/index.js");
}

/**
 * The package's entry (dist/), built first when missing or older than a file under src/
 * (a build rewrites every output, so its entry's time is the build's).
 */
export function distEntry(log: (line: string) => void): string {
  const entry = packageEntry();
  let built = 0;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    // missing: built below
  }
  const sources = newestUnder(join(repo, "src"));
  if (built >= sources) {
    log("dist/ is current (newer than every file under src/)");
    return entry;
  }
  log(built === 0 ? "dist/ is missing: npm run build" : "dist/ is older than src/: npm run build");
  execFileSync("npm", ["run", "--silent", "build"], { cwd: repo, stdio: "inherit" });
  return entry;
}

export interface CompiledHarness {
  /** The bundled child, to fork with plain node. */
  path: string;
  /** The environment the child needs (which invocache entry to import). */
  env: Record<string, string>;
}

/** Bundle child.ts into bench/.tmp/ (inside the repository, so bare imports resolve from node_modules). */
export async function compileHarness(log: (line: string) => void): Promise<CompiledHarness> {
  const entry = distEntry(log);
  const outDir = join(repo, "bench", ".tmp");
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, `peers-child-${process.pid}.mjs`);
  // Removed however the bench ends (a failed check, an exception, --keep).
  process.once("exit", () => rmSync(path, { force: true }));
  const t0 = performance.now();
  await build({
    entryPoints: [join(here, "child.ts")],
    outfile: path,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
    plugins: [
      {
        // Belt and braces: tools.ts imports invocache through ENTRY_ENV (a
        // computed specifier esbuild leaves alone); a static import of the
        // sources' entry would be mapped to dist/ here rather than inlined.
        name: "invocache-from-dist",
        setup(b) {
          b.onResolve({ filter: /\/src\/index\.(js|ts)$/ }, () => ({
            path: entry,
            external: true,
          }));
        },
      },
    ],
  });
  log(`harness bundled for plain node in ${(performance.now() - t0).toFixed(0)} ms`);
  return { path, env: { [ENTRY_ENV]: pathToFileURL(entry).href } };
}
