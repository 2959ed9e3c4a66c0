/**
 * Shared plumbing for tests that start a real server: find its binary, and
 * decide between skipping visibly (a developer without the server) and
 * failing (CI, where .ci/run installs it, so a missing binary is a bug).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Path of `name` on PATH or in one of `extraDirs`, or undefined.
 *
 * @example
 * findBinary("redis-server") // "/usr/bin/redis-server"
 */
export function findBinary(name: string, extraDirs: readonly string[] = []): string | undefined {
  const which = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  const found = which.stdout.trim();
  if (which.status === 0 && found !== "") return found;
  for (const dir of extraDirs) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Debian keeps server binaries in /usr/lib/postgresql/<major>/bin, off PATH; newest first. */
export function postgresBinDirs(): string[] {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, "bin"));
}

/**
 * Whether a suite needing `what` must be skipped. Prints the reason when it
 * does; throws instead when `CI` is set, so CI never goes green by skipping.
 *
 * @example
 * const skip = skipUnless(findBinary("redis-server") !== undefined, "redis-server", "apt-get install redis-server");
 */
export function skipUnless(available: boolean, what: string, install: string): boolean {
  if (available) return false;
  const missing = `${what} is not installed (install with \`${install}\`)`;
  if (process.env.CI) {
    throw new Error(`${missing}: CI must run its tests, not skip them; .ci/run installs it`);
  }
  console.warn(`\u26a0 ${missing}: its tests are SKIPPED`);
  return true;
}
