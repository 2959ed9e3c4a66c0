/**
 * Loading the optional peer dependencies (@keyv/redis, @keyv/postgres): a
 * missing package is a StoreError that says which command installs it.
 */
import { StoreError } from "../../errors.js";

/**
 * Run `load` (a dynamic `import()` of `specifier`); when the package is not
 * installed, reject with a `StoreError` naming the `npm install` to run.
 *
 * @example
 * const mod = await importOptional("@keyv/redis", store.url, () => import("@keyv/redis"));
 */
export async function importOptional<T>(
  specifier: string,
  storeUrl: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    if (!isMissing(cause, specifier)) throw cause;
    throw new StoreError(
      storeUrl,
      "open",
      `invocache store ${storeUrl}: open failed: the optional package ${specifier} is not installed. ` +
        `Run \`npm install ${specifier}\` (or use the embedded sqlite:// store).`,
      { cause },
    );
  }
}

function isMissing(error: unknown, specifier: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = "code" in error ? error.code : undefined;
  const message = "message" in error ? String(error.message) : "";
  // Node's ESM loader says ERR_MODULE_NOT_FOUND, require() says MODULE_NOT_FOUND;
  // only this package counts (a missing dependency *inside* it is a real bug).
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    (message.includes(`'${specifier}'`) || message.includes(`"${specifier}"`))
  );
}
