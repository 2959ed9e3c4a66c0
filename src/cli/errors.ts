/**
 * The command's errors and exit codes. Every failure the command reports on
 * purpose is a {@link CliError} carrying its exit code, so `main` never has
 * to guess: 0 ok, 1 a negative answer (verification failed, a miss, an id
 * not found or ambiguous, a store or cassette that cannot be used), 2 the
 * command line itself is wrong.
 */
import { InvocacheError, StoreError } from "../errors.js";

/** The documented exit codes (docs/cli.md). */
export const EXIT = {
  /** Everything asked was done and every check passed. */
  ok: 0,
  /** A negative answer: verification failed, a miss, not found, ambiguous, or an operation failed. */
  failed: 1,
  /** The command line is wrong: unknown command or option, missing or malformed argument. */
  usage: 2,
} as const;

/** An exit code the command returns. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Options of {@link CliError}. */
export interface CliErrorOptions {
  exitCode?: ExitCode;
  /** Lines printed under the one-line message (candidates of an ambiguous prefix…). */
  details?: readonly string[];
  /** Extra fields for the `--json` error object. */
  data?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * A failure the command reports as one line (plus optional detail lines)
 * and an exit code.
 *
 * @example
 * throw new CliError("ERR_NOT_FOUND", "no entry starts with 3f2a9c0d; list them with `invocache ls`");
 */
export class CliError extends InvocacheError {
  readonly exitCode: ExitCode;
  readonly details: readonly string[];
  readonly data: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: CliErrorOptions = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = options.exitCode ?? EXIT.failed;
    this.details = options.details ?? [];
    this.data = options.data ?? {};
  }
}

/**
 * The command line is wrong (exit code 2). The message says how to fix it,
 * usually ending with the command's `--help`.
 *
 * @example
 * throw new UsageError("ls takes no arguments; see `invocache ls --help`");
 */
export class UsageError extends CliError {
  constructor(message: string, options: Omit<CliErrorOptions, "exitCode"> = {}) {
    super("ERR_USAGE", message, { ...options, exitCode: EXIT.usage });
  }
}

// Store failures as the CLI reports them: one line that says what was being
// done, where, why it failed (the root cause, not the chain of wrappers) and
// what to check, with exit code 1.

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
