/**
 * Store failures as the CLI reports them: one line that says what was being
 * done, where, why it failed (the root cause, not the chain of wrappers) and
 * what to check, with exit code 1.
 */
import { StoreError } from "../errors.js";
import { CliError } from "./errors.js";

/**
 * The CLI error for a failed store operation.
 *
 * @param doing what the command was doing, e.g. `list the entries of namespace "demo"`.
 * @example
 * throw storeFailure(error, "list the entries", "sqlite:///app/.invocache/cache.sqlite");
 * // invocache: cannot list the entries in sqlite:///…: permission denied (EACCES); check that you may read the file
 */
export function storeFailure(error: unknown, doing: string, url: string): CliError {
  const cause = rootCause(error);
  const code = (cause as { code?: unknown }).code;
  const why = reason(cause);
  return new CliError("ERR_STORE", `cannot ${doing} in ${url}: ${why}; ${hint(url, code, why)}`, {
    cause: error,
    data: { store: url, ...(typeof code === "string" ? { cause: code } : {}) },
  });
}

/** Whether `error` is a store failure {@link storeFailure} should report. */
export function isStoreError(error: unknown): error is StoreError {
  return error instanceof StoreError;
}

function rootCause(error: unknown): unknown {
  let e = error;
  // StoreError wraps the driver's error; a driver may wrap the system error.
  for (let i = 0; i < 8 && e instanceof Error && e.cause !== undefined; i++) e = e.cause;
  return e;
}

function reason(cause: unknown): string {
  const code = (cause as { code?: unknown }).code;
  const message = String((cause as Error)?.message ?? cause)
    .split("\n")[0]!
    .replace(/^SQLITE_\w+:\s*/, "")
    .replace(/^E[A-Z]+: /, "")
    .replace(/\.$/, "");
  if (code === "EACCES" || code === "EPERM") return `permission denied (${code})`;
  if (code === "ENOENT") return "no such file";
  return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
}

function hint(url: string, code: unknown, why: string): string {
  if (url.startsWith("sqlite:")) {
    if (
      code === "EACCES" ||
      code === "EPERM" ||
      code === "SQLITE_CANTOPEN" ||
      code === "SQLITE_PERM"
    ) {
      return "check that you may read the file and its folders (ls -l)";
    }
    if (code === "SQLITE_READONLY") return "the file is read-only: this command needs to write it";
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT" || /invocache store/.test(why)) {
      return "pass --store with the path of an invocache store";
    }
    return "check the file with sqlite3, or pass another --store";
  }
  if (url.startsWith("memory:")) return "this is a bug; please report it";
  return "check that the server is running and the URL (host, port, credentials) is right";
}
