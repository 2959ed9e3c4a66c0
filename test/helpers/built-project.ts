/**
 * A throwaway project that uses the BUILT package as a user installs it:
 * `node_modules/invocache` (and any other packages asked for) are links to
 * this checkout's, so `invocache/register`, `invocache/jest`… resolve through
 * package.json's "exports" to dist/. Used by the tests that run real child
 * processes (node --import, node --test, jest).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { tempDir } from "./tmp.js";

export const repoRoot = resolve(import.meta.dirname, "..", "..");

function newest(dir: string): number {
  let max = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    max = Math.max(max, s.isDirectory() ? newest(p) : s.mtimeMs);
  }
  return max;
}

/** `npm run build`'s two steps, when dist/ is missing or older than src/ (npm test builds first). */
export function ensureBuilt(): void {
  const entry = join(repoRoot, "dist", "index.js");
  const fresh =
    existsSync(entry) &&
    existsSync(join(repoRoot, "dist", "chunks")) &&
    statSync(entry).mtimeMs >= newest(join(repoRoot, "src"));
  if (fresh) return;
  const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: repoRoot,
    stdio: "pipe",
  });
  execFileSync(process.execPath, [join(repoRoot, "scripts", "bundle.mjs")], {
    cwd: repoRoot,
    stdio: "pipe",
  });
}

/**
 * A temp folder with `node_modules/invocache` linked to this checkout and
 * `packages` linked from its node_modules, plus `files` written in it.
 *
 * @example
 * const dir = builtProject("register", ["openai"], { "app.mjs": "…" });
 */
export function builtProject(
  label: string,
  packages: readonly string[],
  files: Record<string, string>,
): string {
  const dir = tempDir(label);
  const modules = join(dir, "node_modules");
  mkdirSync(modules, { recursive: true });
  symlinkSync(repoRoot, join(modules, "invocache"), "dir");
  for (const name of packages) {
    const target = join(modules, name);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules", name), target, "dir");
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}
