/**
 * Progress bars: drawn on stderr when it is a terminal (a real
 * pseudo-terminal, from util-linux `script`), never on a pipe. The delay
 * before a bar appears is set to 0 so that small stores show one too.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder, openStore } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, builtCli, cleanEnv, cli } from "./helpers.js";

const cwd = tempDir("cli-progress");

const ENV = { INVOCACHE_PROGRESS_DELAY_MS: "0", NO_COLOR: "1" };
const requests = Array.from({ length: 12 }, (_, i) => ({
  role: `step-${i}`,
  model: "m",
  prompt: `Do step ${i}`,
}));

beforeAll(async () => {
  await buildCli();
  const store = openStore(`sqlite://${join(cwd, "cache.sqlite")}`);
  const recorder = createRecorder({ store, mode: "auto" });
  for (const req of requests) await recorder.call(req, async () => ({ text: "ok" }));
  await recorder.close();
  await store.close();
  for (const name of ["a.yaml", "b.yaml"]) {
    const cassette = cassetteStore(join(cwd, "cassettes", name), { env: {}, parseCache: false });
    const rec = createRecorder({ store: cassette, mode: "auto" });
    await rec.call(requests[0]!, async () => ({ text: "ok" }));
    await rec.close();
    await cassette.close();
  }
}, BUILD_TIMEOUT);

/** Run the CLI with stdin, stdout and stderr on a pseudo-terminal; all output as one string. */
function onTerminal(args: readonly string[]): { status: number | null; output: string } {
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = [process.execPath, builtCli(), ...args].map(quote).join(" ");
  const r = spawnSync("script", ["-q", "-e", "-c", command, "/dev/null"], {
    cwd,
    env: cleanEnv(ENV),
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, output: r.stdout };
}

const CASES: Array<{ args: string[]; label: RegExp; code?: number }> = [
  { args: ["ls", "--store", "sqlite://cache.sqlite"], label: /reading sqlite:\/\/\S+ \d+/ },
  { args: ["stats", "--store", "sqlite://cache.sqlite"], label: /reading sqlite:\/\/\S+ \d+/ },
  {
    args: ["explain", "deadbeef00", "deadbeef01", "--store", "sqlite://cache.sqlite"],
    label: /reading sqlite:\/\/\S+ \d+/,
    code: 1,
  },
  { args: ["ls", "--cassette", "cassettes"], label: /reading cassette:\/\/cassettes… \d+/ },
  { args: ["redact", "cassettes", "--dry-run"], label: /redacting \[[█░]+\] \d+\/2/ },
];

describe("progress", () => {
  it.each(CASES.map((c) => ({ ...c, line: c.args.join(" ") })))(
    "$line: a bar on a terminal, none on a pipe",
    ({ args, label, code = 0 }) => {
      const tty = onTerminal(args);
      expect(tty.status, tty.output).toBe(code);
      expect(tty.output).toMatch(label);
      expect(tty.output).toContain("\r\x1b[K");
      const pipe = cli(args, { cwd, env: ENV });
      expect(pipe.status, pipe.stderr).toBe(code);
      expect(pipe.stderr).not.toMatch(label);
      expect(pipe.stderr).not.toContain("\r");
    },
  );

  it("prune on a store: one counter while it scans and deletes in batches", () => {
    copyFileSync(join(cwd, "cache.sqlite"), join(cwd, "prune.sqlite"));
    const tty = onTerminal(["prune", "--older-than", "1ms", "--store", "sqlite://prune.sqlite"]);
    expect(tty.status, tty.output).toBe(0);
    // Deleting as it scans, it cannot know the total: a count, not a bar.
    expect(tty.output).toMatch(/pruning sqlite:\/\/\S+ \d+/);
    expect(tty.output).toMatch(/Removed 12 entries/);
  });
});
