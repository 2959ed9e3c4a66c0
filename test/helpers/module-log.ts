/**
 * A record of every module a child process loads: an ESM loader hook (run in
 * the hooks thread) appends each URL to a log file. Start the child with
 * `--import <register>`; read the log afterwards. Tests use it to check what
 * an import does not load (yaml, diff, the price table on a cold start).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export interface ModuleLog {
  /** The log file: one `esm <url>` line per module loaded. */
  log: string;
  /** The module to pass to `node --import` so the hook is registered first. */
  register: string;
}

/** Write the hook and its register module into `dir`. */
export function moduleLog(dir: string): ModuleLog {
  const log = join(dir, "loaded.log");
  writeFileSync(log, "");
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, "esm " + url + "\\n");
  return next(url, context);
}
`,
  );
  const register = join(dir, "register.mjs");
  writeFileSync(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return { log, register };
}
