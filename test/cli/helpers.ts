/**
 * Shared by the CLI end-to-end tests: build the binary once per test run
 * (all test files, all workers), then spawn it like a user would.
 *
 * The build goes to `.invocache/cli-build/<hash of the sources>/` rather
 * than `dist/`: concurrent test runs (and a developer's own `npm run build`)
 * never see a half-written tree, and an unchanged tree is not rebuilt. One
 * process builds under a lock (an atomic `mkdir`); the others wait for it.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
const BUILDS = join(ROOT, ".invocache", "cli-build");
const STALE_LOCK_MS = 120_000;

/** A finished CLI run. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  json<T = Record<string, unknown>>(): T;
}

let built: string | undefined;

/**
 * Build `src/` (once per source tree, see {@link transpileTree}) and return
 * the path of the built `cli/main.js`.
 */
export async function buildCli(): Promise<string> {
  if (built !== undefined) return built;
  const dir = join(BUILDS, sourceHash());
  const main = join(dir, "cli", "main.js");
  const done = join(dir, ".complete");
  const lock = `${dir}.lock`;
  mkdirSync(BUILDS, { recursive: true });
  const deadline = Date.now() + 170_000;
  while (!existsSync(done)) {
    let mine = false;
    try {
      mkdirSync(lock);
      mine = true;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS)
          rmSync(lock, { recursive: true, force: true });
      } catch {
        // gone meanwhile: retry
      }
    }
    if (mine) {
      try {
        if (!existsSync(done)) compile(dir);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      break;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for another test process to build ${dir}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!existsSync(main)) throw new Error(`the build in ${dir} has no cli/main.js`);
  built = main;
  return main;
}

function compile(dir: string): void {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  transpileTree(join(ROOT, "src"), tmp);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  writeFileSync(join(dir, ".complete"), new Date().toISOString());
  // Old trees from earlier source versions: keep the last few.
  const old = readdirSync(BUILDS)
    .filter((n) => /^[0-9a-f]{16}$/.test(n) && join(BUILDS, n) !== dir)
    .map((n) => ({ n, t: statSync(join(BUILDS, n)).mtimeMs }))
    .sort((a, b) => b.t - a.t)
    .slice(3);
  for (const { n } of old) rmSync(join(BUILDS, n), { recursive: true, force: true });
}

/**
 * Emit every `src/**\/*.ts` as JavaScript with TypeScript's own emitter, file
 * by file. The project compiles with `isolatedModules` and
 * `verbatimModuleSyntax`, so this is the JavaScript `tsc -p
 * tsconfig.build.json` writes to dist/, in about a second instead of ten
 * (type checking is the typecheck step's job). Set
 * `INVOCACHE_CLI_TEST_TSC=1` to build with tsc itself.
 */
function transpileTree(src: string, out: string): void {
  if (process.env.INVOCACHE_CLI_TEST_TSC === "1") {
    const tsc = require_.resolve("typescript/lib/tsc.js");
    const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", out], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 160_000,
    });
    if (!existsSync(join(out, "cli", "main.js"))) {
      throw new Error(
        `tsc -p tsconfig.build.json failed (status ${r.status}):\n${r.stdout}${r.stderr}`,
      );
    }
    return;
  }
  const ts = require_("typescript") as typeof import("typescript");
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        walk(p);
        continue;
      }
      if (!name.endsWith(".ts") || name.endsWith(".d.ts")) continue;
      const { outputText } = ts.transpileModule(readFileSync(p, "utf8"), {
        fileName: p,
        compilerOptions: {
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.ESNext,
          verbatimModuleSyntax: true,
        },
      });
      const target = join(out, relative(src, p)).replace(/\.ts$/, ".js");
      mkdirSync(join(target, ".."), { recursive: true });
      writeFileSync(target, outputText);
    }
  };
  walk(src);
}

const require_ = createRequire(import.meta.url);

/** A digest of everything the build reads: src/**, the tsconfigs, the lockfile. */
function sourceHash(): string {
  const h = createHash("sha256");
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".ts") || name.endsWith(".json")) {
        h.update(`${relative(ROOT, p)}\0`);
        h.update(readFileSync(p));
      }
    }
  };
  walk(join(ROOT, "src"));
  for (const f of ["tsconfig.json", "tsconfig.build.json", "package.json"])
    h.update(readFileSync(join(ROOT, f)));
  h.update(process.env.INVOCACHE_CLI_TEST_TSC === "1" ? "tsc" : "transpile");
  return h.digest("hex").slice(0, 16);
}

/** The environment the CLI runs in: the test's, minus what would change its output. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    "FORCE_COLOR",
    "NO_COLOR",
    "INVOCACHE_MODE",
    "INVOCACHE_DEBUG",
    "OPENAI_API_KEY",
  ]) {
    delete env[name];
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * Spawn the built `invocache` with `args` in `cwd`.
 *
 * @example
 * const r = cli(["ls", "--json"], { cwd });
 * expect(r.status).toBe(0);
 */
export function cli(
  args: readonly string[],
  opts: {
    cwd: string;
    env?: Record<string, string | undefined>;
    input?: string;
    /** A file descriptor to use as stdin instead of `input` (e.g. /dev/zero). */
    stdinFd?: number;
    /** Run as this user (the test runs as root: see {@link asUnprivileged}). */
    uid?: number;
    gid?: number;
  },
): CliResult {
  if (built === undefined) throw new Error("call buildCli() in beforeAll first");
  const r = spawnSync(process.execPath, [built, ...args], {
    cwd: opts.cwd,
    env: cleanEnv(opts.env),
    ...(opts.stdinFd === undefined
      ? { input: opts.input ?? "" }
      : { stdio: [opts.stdinFd, "pipe", "pipe"] }),
    ...(opts.uid === undefined ? {} : { uid: opts.uid }),
    ...(opts.gid === undefined ? {} : { gid: opts.gid }),
    encoding: "utf8",
    timeout: 60_000,
    // Large listings (test/cli/scale.test.ts) print tens of MB; the default is 1 MiB.
    maxBuffer: 1 << 30,
  });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    json<T>() {
      try {
        return JSON.parse(r.stdout) as T;
      } catch {
        throw new Error(
          `stdout is not JSON (status ${r.status}):\n${r.stdout}\nstderr:\n${r.stderr}`,
        );
      }
    },
  };
}

/** How long the build may take in a beforeAll (a cold build under a loaded machine). */
export const BUILD_TIMEOUT = 180_000;

/**
 * Who to run the CLI as so that file permissions apply: root ignores them,
 * so a root test run spawns the CLI as `nobody`; anyone else runs as
 * themselves.
 */
export function asUnprivileged(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
}

/** The path of the built `cli/main.js` (after {@link buildCli}). */
export function builtCli(): string {
  if (built === undefined) throw new Error("call buildCli() in beforeAll first");
  return built;
}
