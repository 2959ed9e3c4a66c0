/**
 * The Python side of the tests: the venv named by `INVOCACHE_PYTHON` (its
 * `python`), `pip install ./python` into it once, and `invocache proxy`
 * started from the built CLI (`dist/cli/main.js`) on a free port.
 *
 * Locally, without `INVOCACHE_PYTHON`, the Python tests are skipped; under
 * `CI` they fail instead (`.ci/run` creates the venv and sets it), so CI can
 * never go green without running them.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const CLI = join(REPO, "dist", "cli", "main.js");
/** `node dist/cli/main.js`, as `INVOCACHE_CLI` wants it. */
export const CLI_COMMAND = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`;

/** The venv's python, or undefined when `INVOCACHE_PYTHON` is unset. */
export const PYTHON = process.env.INVOCACHE_PYTHON?.trim() || undefined;
/** Under CI the Python tests must run. */
export const REQUIRED = process.env.CI !== undefined && process.env.CI !== "";
/** Skip (locally) when there is no venv; under CI never skip, fail. */
export const SKIP = PYTHON === undefined && !REQUIRED;
export const SKIP_REASON = SKIP ? " (INVOCACHE_PYTHON not set: skipped outside CI)" : "";

/** The python to run; throws the fix when it is missing (under CI). */
export function python(): string {
  if (PYTHON === undefined) {
    throw new Error(
      "INVOCACHE_PYTHON is not set: under CI the pytest-invocache tests must run. Set it to a venv's python " +
        "with openai, anthropic and pytest installed (.ci/run creates one).",
    );
  }
  if (!existsSync(PYTHON)) throw new Error(`INVOCACHE_PYTHON=${PYTHON} does not exist`);
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  return PYTHON;
}

let installed = false;
/** `pip install ./python` into the venv, once per test file. */
export function installPlugin(): string {
  const py = python();
  if (installed) return py;
  const r = spawnSync(
    py,
    [
      "-m",
      "pip",
      "install",
      "--retries",
      "0",
      "--no-deps",
      "--force-reinstall",
      "--quiet",
      join(REPO, "python"),
    ],
    { encoding: "utf8", timeout: 180_000 },
  );
  if (r.status !== 0) {
    throw new Error(`pip install ./python failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  installed = true;
  return py;
}

/** A running `invocache proxy` child. */
export interface ProxyChild {
  url: string;
  /** Everything it wrote so far. */
  output(): string;
  /** SIGTERM and wait for it to exit. */
  stop(): Promise<number | null>;
}

/** Start `node dist/cli/main.js proxy --port 0 …args` and wait for its ready line. */
export async function startProxy(args: readonly string[]): Promise<ProxyChild> {
  const child: ChildProcess = spawn(process.execPath, [CLI, "proxy", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (d: string) => {
    out += d;
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`proxy printed no ready line:\n${out}`)), 30_000);
    child.stdout?.on("data", (d: string) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        done(m[0]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`proxy exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
