/**
 * The version `invocache --version` prints: read from the package's own
 * package.json at run time, found by walking up from this module (dist/cli/
 * in a package, src/cli/ in a checkout), so it is the installed package's
 * version even if the built code and the manifest ever disagree.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { INVOCACHE_VERSION } from "../version.js";

/**
 * The `version` of the nearest package.json named `invocache` above this
 * module, or the built-in version when there is none (a bundled copy).
 *
 * @example
 * packageVersion() // "0.1.0"
 */
export function packageVersion(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let i = 0; i < 8; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "invocache" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // no (readable) package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return INVOCACHE_VERSION;
}
