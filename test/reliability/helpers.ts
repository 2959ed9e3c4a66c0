/**
 * Plumbing for the fault and soak suite: temp folders, a counting loopback
 * upstream, child processes that report in JSON lines, a Redis that can be
 * killed and brought back on the same port with its data, and the
 * privileged tricks (tmpfs, read-only bind mounts, immutable files) that
 * need root.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../helpers/free-port.js";
import { ping, redisServerBinary, stop, waitFor } from "../helpers/redis-server.js";
import { tempDir as sharedTempDir } from "../helpers/tmp.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root (workers run with it as their working directory). */
export const ROOT = join(here, "..", "..");

/** True when the tests run as root (CI does). */
export const IS_ROOT = process.getuid?.() === 0;

/**
 * A temp folder removed after the test file, after unmounting anything a
 * test mounted inside it and left mounted (a failed test's tmpfs).
 */
export function tempDir(label: string): string {
  return sharedTempDir(`rel-${label}`, (dir) => {
    for (const mount of mountsUnder(dir).reverse()) unmount(mount);
  });
}

/** Mount points at or below `dir` (Linux), outermost first. */
function mountsUnder(dir: string): string[] {
  if (!existsSync("/proc/self/mounts")) return [];
  return readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[1] ?? "")
    .map((field) =>
      field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))),
    )
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
}

/**
 * Skip a suite that needs a capability this machine may not grant (root,
 * mounting a tmpfs…), printing why. Unlike `skipUnless` (for packages CI
 * installs), this never fails under CI: an unprivileged CI container cannot
 * be made to mount, and saying so is the honest result.
 */
export function skipWithout(available: boolean, what: string, why: string): boolean {
  if (available) return false;
  console.warn(`\u26a0 ${what}: SKIPPED (${why})`);
  return true;
}

// ---- a counting upstream ------------------------------------------------------

/** A loopback HTTP "model" that counts the calls it gets, per path. */
export interface Upstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Calls per path name (the path without its leading `/`). */
  readonly calls: ReadonlyMap<string, number>;
  /** All calls so far. */
  readonly total: number;
  reset(): void;
  close(): Promise<void>;
}

/**
 * Start an upstream on 127.0.0.1. `POST /<name>` answers
 * `{ name, answer: "<name>#<n>", serial }` after `delayMs`: `n` counts the
 * calls for that name, `serial` all calls, so a second upstream call for one
 * identity is visible in the answer too.
 */
export async function startUpstream(opts: { delayMs?: number } = {}): Promise<Upstream> {
  const calls = new Map<string, number>();
  let total = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const name = decodeURIComponent((req.url ?? "/").slice(1));
      const n = (calls.get(name) ?? 0) + 1;
      calls.set(name, n);
      const serial = ++total;
      const answer = () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ name, answer: `${name}#${n}`, serial }));
      };
      if (opts.delayMs === undefined || opts.delayMs <= 0) answer();
      else setTimeout(answer, opts.delayMs);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    get total() {
      return total;
    },
    reset() {
      calls.clear();
      total = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- child processes ----------------------------------------------------------

/** A child process running a TypeScript worker, its output split in lines. */
export interface Worker {
  readonly child: ChildProcess;
  /** Lines printed so far. */
  readonly lines: string[];
  /** Resolves when a line satisfying `probe` has been printed. */
  line(probe: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves when the process ends (any exit code or signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Run `node --import tsx <script> ...args` from the repository root. */
export function startWorker(script: string, args: readonly string[]): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stdout!.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const parts = partial.split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters) w();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }>((resolve) => {
    child.on("close", (code, signal) => {
      if (partial !== "") lines.push(partial);
      partial = "";
      for (const w of waiters) w();
      resolve({ code, signal, stderr });
    });
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    lines,
    exited,
    line(probe, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(probe);
          if (found !== undefined) {
            cleanup();
            resolve(found);
          } else if (done) {
            cleanup();
            reject(new Error(`${script} exited before printing the line: ${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${script}: ${stderr}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Path of a worker script in test/reliability/workers. */
export function workerScript(name: string): string {
  return join(here, "workers", name);
}

/** Resolve after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll `probe` every few milliseconds until it is true; throw after `ms`. */
export async function until(probe: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(5);
  }
}

// ---- a Redis that survives being killed -----------------------------------------

/** A redis-server with an append-only file: killed with SIGKILL, restarted with its data. */
export interface DurableRedis {
  readonly port: number;
  readonly url: string;
  /** SIGKILL, as an OOM killer or a crashed host would. */
  kill(): Promise<void>;
  /** Start again on the same port and data folder; resolves once it answers PING. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Start a redis-server on a free port whose data survives SIGKILL
 * (`appendonly yes`, `appendfsync always`).
 */
export async function startDurableRedis(dataDir: string): Promise<DurableRedis> {
  if (redisServerBinary === undefined) throw new Error("redis-server is not installed");
  const binary = redisServerBinary;
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const proc = spawn(
      binary,
      [
        ...["--port", String(port), "--bind", "127.0.0.1", "--dir", dataDir, "--save", ""],
        ...["--appendonly", "yes", "--appendfsync", "always"],
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    proc.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child = proc;
    await waitFor(
      () => ping(port),
      10_000,
      () => `redis-server did not answer on ${port}: ${stderr}`,
    );
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const proc = child;
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
      const gone = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGKILL");
      await gone;
    },
    restart: launch,
    async stop() {
      if (child !== undefined) await stop(child);
    },
  };
}

// ---- privileged file system tricks ----------------------------------------------

function run(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

let mountable: boolean | undefined;

/** Whether this process may mount file systems (root with CAP_SYS_ADMIN, e.g. CI). */
export function canMount(): boolean {
  if (mountable !== undefined) return mountable;
  mountable = false;
  if (!IS_ROOT) return mountable;
  const probe = mkdtempSync(join(tmpdir(), "invocache-rel-mount-probe-"));
  try {
    if (run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe])) {
      mountable = run("umount", [probe]);
    }
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return mountable;
}

/** Mount a tmpfs of `size` (`256k`) on `dir` (root only). Undo with {@link unmount}. */
export function mountTmpfs(dir: string, size: string): void {
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0755`, "tmpfs", dir], {
    stdio: "pipe",
  });
}

/** Make `dir` a read-only view of itself (a read-only bind mount; root only). Undo with {@link unmount}. */
export function bindReadOnly(dir: string): void {
  execFileSync("mount", ["--bind", dir, dir], { stdio: "pipe" });
  try {
    execFileSync("mount", ["-o", "remount,bind,ro", dir], { stdio: "pipe" });
  } catch (error) {
    unmount(dir);
    throw error;
  }
}

/** Unmount `dir`, lazily if something still holds it open; never throws. */
export function unmount(dir: string): void {
  if (!run("umount", [dir])) run("umount", ["-l", dir]);
}

let immutable: boolean | undefined;

/** Whether `chattr +i` works here (root on ext4/xfs/btrfs; not on tmpfs or overlayfs). */
export function canChattr(): boolean {
  if (immutable !== undefined) return immutable;
  immutable = false;
  if (!IS_ROOT) return immutable;
  const probe = mkdtempSync(join(tmpdir(), "invocache-rel-chattr-probe-"));
  try {
    if (run("chattr", ["+i", probe])) immutable = run("chattr", ["-i", probe]);
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return immutable;
}

/** `chattr +i` / `-i` on each path (root only). */
export function setImmutable(paths: readonly string[], on: boolean): void {
  for (const p of paths) execFileSync("chattr", [on ? "+i" : "-i", p], { stdio: "pipe" });
}

// ---- errors ---------------------------------------------------------------------

/** The fields of an error worth asserting on and printing. */
export interface ErrorInfo {
  name: string;
  code?: string;
  message: string;
  /** Codes down the `cause` chain (`SQLITE_BUSY`, `ENOSPC`, `ECONNREFUSED`…). */
  causes: string[];
}

/** Summarize any thrown value. */
export function errorInfo(error: unknown): ErrorInfo {
  const e = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
  const causes: string[] = [];
  let cause = e?.cause as { code?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    if (typeof cause.code === "string") causes.push(cause.code);
    if (Array.isArray(cause.errors)) {
      for (const inner of cause.errors as Array<{ code?: unknown }>) {
        if (typeof inner?.code === "string") causes.push(inner.code);
      }
    }
    cause = cause.cause as typeof cause;
  }
  return {
    name: typeof e?.name === "string" ? e.name : typeof error,
    ...(typeof e?.code === "string" ? { code: e.code } : {}),
    message: typeof e?.message === "string" ? e.message : String(error),
    causes,
  };
}
