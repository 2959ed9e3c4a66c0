/**
 * The compat fixture: test/compat/package.json pins the lowest release of
 * each framework peer range that runs on Node 20, with its own lockfile.
 * `prepareFixture()` installs it from the npm registry once per lockfile
 * (cached under the OS temp folder by the lockfile's hash, so a rerun costs
 * nothing) and makes a run directory inside it holding a copy of the built
 * package as `node_modules/invocache`.
 *
 * A copy, not a link: Node resolves a module's imports from its real path,
 * so a linked package would load the repository's (newest) frameworks. The
 * copy's own runtime dependencies (yaml, keyv, …) are linked to the
 * repository's, which is where the frameworks are not looked up.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));
const here = join(root, "test", "compat");

/** The versions test/compat/package.json pins (the frameworks only). */
export function pinnedVersions(): Record<string, string> {
  const { dependencies } = JSON.parse(readFileSync(join(here, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const { zod: _zod, ...frameworks } = dependencies;
  return frameworks;
}

function run(cmd: string, args: string[], cwd: string, timeout: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(`${cmd} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr}`));
    });
  });
}

/** Newest modification time under `dir`, ms. */
function newest(dir: string): number {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return max;
}

/** dist/ as `npm run build` makes it (tsc, then the bundle; npm test builds before vitest; a targeted run may not have). */
async function ensureBuilt(): Promise<void> {
  const probe = join(root, "dist", "integrations", "openai-agents.js");
  if (existsSync(probe) && statSync(probe).mtimeMs >= newest(join(root, "src"))) return;
  await run(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    root,
    300_000,
  );
  await run(process.execPath, [join(root, "scripts", "bundle.mjs")], root, 120_000);
}

/** The installed fixture for the current lockfile: `<tmp>/invocache-compat-<hash>`. */
async function ensureInstalled(): Promise<string> {
  const lock = readFileSync(join(here, "package-lock.json"));
  const manifest = readFileSync(join(here, "package.json"));
  const hash = createHash("sha256").update(manifest).update(lock).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), `invocache-compat-${hash}`);
  if (existsSync(join(dir, "node_modules", ".package-lock.json"))) return dir;
  // Installed beside, then renamed into place: a parallel run never sees half an install.
  const staging = mkdtempSync(`${dir}.partial-`);
  try {
    cpSync(join(here, "package.json"), join(staging, "package.json"));
    cpSync(join(here, "package-lock.json"), join(staging, "package-lock.json"));
    await run(
      "npm",
      ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
      staging,
      480_000,
    );
    try {
      renameSync(staging, dir);
    } catch (e) {
      if (!existsSync(join(dir, "node_modules", ".package-lock.json"))) throw e;
      rmSync(staging, { recursive: true, force: true }); // another run finished first
    }
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
  return dir;
}

/** A run directory with the scenario and the built package; removed by `cleanup`. */
export async function prepareFixture(): Promise<{ dir: string; cleanup(): void }> {
  await ensureBuilt();
  const installed = await ensureInstalled();
  const runs = join(installed, "runs");
  mkdirSync(runs, { recursive: true });
  const dir = mkdtempSync(join(runs, "run-"));
  const pkg = join(dir, "node_modules", "invocache");
  mkdirSync(pkg, { recursive: true });
  cpSync(join(root, "package.json"), join(pkg, "package.json"));
  cpSync(join(root, "dist"), join(pkg, "dist"), { recursive: true });
  const { dependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(dependencies)) {
    const link = join(pkg, "node_modules", name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(root, "node_modules", name), link, "dir");
  }
  cpSync(join(here, "scenario.mjs"), join(dir, "scenario.mjs"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
