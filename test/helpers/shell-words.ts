/**
 * The words a real `/bin/sh` makes of a printed command line, without
 * running it: for checking that a command invocache prints for a person to
 * paste reaches the program as the words meant (quoting tests).
 */
import { spawnSync } from "node:child_process";
import { expect } from "vitest";

/** Folder names with everything a shell treats specially in a word. */
export const HOSTILE = `it's a "dir" $HOME \`echo pwned\`; x & y|z`;

/**
 * `set -- <command>` in `sh`, then the positional parameters, NUL-separated
 * (on the next line, so a trailing `# comment` in the command stays one).
 * A `<placeholder>` the reader fills in is filled first (`<other-id>`).
 */
export function shellWords(command: string): string[] {
  const filled = command.replace("<other-id>", "0123abcd");
  const r = spawnSync("sh", ["-c", `set -- ${filled}\nprintf '%s\\0' "$@"`], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
  });
  expect(r.stderr, command).toBe("");
  expect(r.status, command).toBe(0);
  return r.stdout.split("\0").slice(0, -1);
}
