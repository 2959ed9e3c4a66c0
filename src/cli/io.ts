/**
 * Where the command writes, and whether it may use colors. Kept behind one
 * small interface so commands never touch `process` directly.
 *
 * Colors follow the usual conventions: never when `NO_COLOR` is set to
 * anything but "" (https://no-color.org) or `FORCE_COLOR` is `0`/`false`;
 * always when `FORCE_COLOR` is set otherwise; else only on a terminal whose
 * `TERM` is not `dumb`.
 */
import { styleText } from "node:util";

type Format = Parameters<typeof styleText>[0];

/** Text styles for one stream; identity functions when colors are off. */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/** The command's view of the process. */
export interface Io {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Write to stdout as is (add the newline yourself). */
  out(text: string | Uint8Array): void;
  /**
   * Resolves once what `out` wrote has left the process's buffer (a slow
   * reader of a pipe): a command printing a million rows waits here instead
   * of queueing them all in memory. Absent: nothing to wait for.
   */
  drained?(): Promise<void>;
  /** Write to stderr as is. */
  err(text: string): void;
  /** Styles for stdout and stderr. */
  readonly style: Style;
  readonly errStyle: Style;
  /** Whether stderr is a terminal (progress bars are drawn only there). */
  readonly stderrTTY: boolean;
  /** Width of the stderr terminal, 80 when unknown. */
  readonly columns: number;
  /**
   * All of stdin; with `maxBytes`, rejects with an {@link InputTooLargeError}
   * as soon as more than that arrived (stdin may be endless: `< /dev/zero`).
   */
  stdin(maxBytes?: number): Promise<Buffer>;
}

/** More input than the command reads (see {@link Io.stdin}). */
export class InputTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
    this.name = "InputTooLargeError";
  }
}

/** The minimum a stream must offer to decide on colors. */
export interface StreamLike {
  isTTY?: boolean | undefined;
}

/**
 * Whether to color output written to `stream`.
 *
 * @example
 * useColor({ isTTY: true }, { NO_COLOR: "1" }) // false
 * useColor({ isTTY: false }, { FORCE_COLOR: "1" }) // true
 */
export function useColor(
  stream: StreamLike,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !(force === "0" || force.toLowerCase() === "false");
  return stream.isTTY === true && env.TERM !== "dumb";
}

/**
 * Styles that color when `enabled` (the caller decided: see {@link useColor}).
 *
 * @example
 * makeStyle(false).red("FAIL") // "FAIL"
 */
export function makeStyle(enabled: boolean): Style {
  // validateStream: false because we decided above; Node's own check looks
  // at stdout even for text meant for stderr.
  const paint = (format: Format) => (text: string) =>
    enabled && text !== "" ? styleText(format, text, { validateStream: false }) : text;
  return {
    enabled,
    bold: paint("bold"),
    dim: paint("dim"),
    red: paint("red"),
    green: paint("green"),
    yellow: paint("yellow"),
    cyan: paint("cyan"),
  };
}

/**
 * The real process: stdout, stderr, stdin, `process.env`, `process.cwd()`.
 *
 * @example
 * const io = processIo();
 * io.out(`${io.style.green("ok")}\n`);
 */
export function processIo(): Io {
  const env = process.env;
  return {
    env,
    cwd: process.cwd(),
    out: (text) => {
      process.stdout.write(text);
    },
    drained: () =>
      process.stdout.writableNeedDrain
        ? new Promise<void>((resolve) => {
            // A closed pipe never drains: main.ts exits on its EPIPE.
            process.stdout.once("drain", resolve);
          })
        : Promise.resolve(),
    err: (text) => {
      process.stderr.write(text);
    },
    style: makeStyle(useColor(process.stdout, env)),
    errStyle: makeStyle(useColor(process.stderr, env)),
    stderrTTY: process.stderr.isTTY === true,
    // A terminal of unknown size (a pty nobody sized, e.g. under `script`) reports 0.
    columns: process.stderr.columns || 80,
    stdin: async (maxBytes = Number.POSITIVE_INFINITY) => {
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of process.stdin) {
        total += (chunk as Buffer).length;
        if (total > maxBytes) {
          process.stdin.destroy();
          throw new InputTooLargeError(maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks);
    },
  };
}
