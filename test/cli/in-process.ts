/**
 * Running a command in this process (`runCli` with an Io of strings), for
 * tests that need a seam of the command (prune's batch hook) or several
 * stores at once. Most CLI tests spawn the built binary instead.
 */
import { type Io, makeStyle } from "../../src/cli/io.js";

/** An Io whose stdout and stderr are kept as text; no colors, no terminal. */
export function fakeIo(cwd: string): Io & { stdout: () => string; stderr: () => string } {
  let out = "";
  let err = "";
  return {
    env: {},
    cwd,
    out(text) {
      out += typeof text === "string" ? text : Buffer.from(text).toString();
    },
    err(text) {
      err += text;
    },
    style: makeStyle(false),
    errStyle: makeStyle(false),
    stderrTTY: false,
    columns: 80,
    stdin: async () => Buffer.alloc(0),
    stdout: () => out,
    stderr: () => err,
  };
}
