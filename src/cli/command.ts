/**
 * The shape of one command. Each lives in `commands/<name>.ts`, parses its
 * own arguments and returns an exit code; `run.ts` dispatches and turns
 * errors into one-line messages.
 */
import type { ExitCode } from "./errors.js";
import type { Io } from "./io.js";

/** One `invocache <name>` command. */
export interface Command {
  readonly name: string;
  /** The full text of `invocache <name> --help`: usage, options, examples. */
  readonly help: string;
  /** Run with the arguments after the command name. */
  run(argv: readonly string[], io: Io): Promise<ExitCode>;
}

/**
 * A command as the dispatcher knows it before loading it: loading a command
 * module loads what it needs (stores, cassettes, the recorder…), so
 * `invocache --help` and usage errors stay fast.
 */
export interface CommandEntry {
  readonly name: string;
  /** One line for `invocache --help`. */
  readonly summary: string;
  load(): Promise<Command>;
}

/**
 * Write `value` as the command's `--json` output: pretty-printed, one
 * document, newline-terminated.
 *
 * @example
 * printJson(io, { id, shortId });
 */
export function printJson(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
