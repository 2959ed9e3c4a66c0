/**
 * The command's errors and exit codes. Every failure the command reports on
 * purpose is a {@link CliError} carrying its exit code, so `main` never has
 * to guess: 0 ok, 1 a negative answer (verification failed, a miss, an id
 * not found or ambiguous, a store or cassette that cannot be used), 2 the
 * command line itself is wrong.
 */
import { InvocacheError } from "../errors.js";

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
