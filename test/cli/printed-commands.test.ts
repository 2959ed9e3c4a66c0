/**
 * The commands the CLI prints for a person to paste (the demo's "Look
 * around", keygen's Sign/Verify lines) are quoted for the shell: run from a
 * folder whose name has spaces, quotes, `$`, backticks and `;`, each printed
 * line is read back by a real `/bin/sh`, and the words it gives run as the
 * CLI command they name.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run.js";
import { HOSTILE, shellWords } from "../helpers/shell-words.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

function hostileDir(): string {
  const dir = join(tempDir("printed"), HOSTILE);
  mkdirSync(dir);
  return dir;
}

describe("commands the CLI prints, under a hostile path", () => {
  it("demo: every 'Look around' command reaches the CLI as the words meant, and runs", async () => {
    const dir = hostileDir();
    const store = `sqlite://${join(dir, "cache.sqlite")}`;
    const io = fakeIo(dir);
    expect(await runCli(["demo", "--store", store, "--out", join(dir, "out $dir 'x'")], io)).toBe(
      0,
    );
    const lines = io
      .stdout()
      .split("\n")
      .filter((l) => l.startsWith("  invocache "));
    expect(lines.map((l) => l.trim().split(" ")[1])).toEqual([
      "ls",
      "show",
      "explain",
      "view",
      "verify",
    ]);
    for (const line of lines) {
      const words = shellWords(line);
      expect(words[0]).toBe("invocache");
      if (words[1] !== "verify") expect(words.slice(-2)).toEqual(["--store", store]);
      if (words[1] === "view") continue; // it would serve until stopped
      // verify reads paths against process.cwd(): in process, make them absolute.
      const argv =
        words[1] === "verify"
          ? words.slice(1).map((w, i) => (i === 1 || i === 3 ? join(dir, w) : w))
          : words.slice(1);
      const run = fakeIo(dir);
      expect(await runCli(argv, run), `${line}\n${run.stdout()}${run.stderr()}`).toBe(0);
    }
  }, 60_000);

  it("keygen: the Sign and Verify lines name the key files as one word each", async () => {
    const dir = hostileDir();
    const io = fakeIo(dir);
    expect(await runCli(["keygen", "--out", join(dir, "k e y s")], io)).toBe(0);
    const sign = io.stdout().match(/^Sign: +(.*)$/m)![1]!;
    const verify = io.stdout().match(/^Verify: +(.*)$/m)![1]!;
    const key = shellWords(sign.replace("<artifact>", "a").replace("<prefix>", "p")).at(-1)!;
    const pub = shellWords(verify.replace("<artifact>", "a")).at(-1)!;
    expect(key).toBe(join("k e y s", "invocache-signing.key.pem"));
    expect(existsSync(join(dir, key))).toBe(true);
    expect(existsSync(join(dir, pub))).toBe(true);
  });
});
