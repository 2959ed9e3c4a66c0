/**
 * docs/cli.md's exit-code table is the contract: every code it documents is
 * produced by real command lines here, the table lists exactly the codes the
 * CLI has, and a missing input is a usage error (2) for every command that
 * takes one.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/errors.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli, ROOT } from "./helpers.js";

const cwd = tempDir("cli-exit");

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let port = 0;
beforeAll(async () => {
  await buildCli();
  port = await closedPort();
  writeFileSync(join(cwd, "a.json"), JSON.stringify({ role: "planner", prompt: "Plan it" }));
  writeFileSync(join(cwd, "b.json"), JSON.stringify({ role: "builder", prompt: "Build it" }));
}, BUILD_TIMEOUT);

/** The rows of the table under "### Exit codes" in docs/cli.md: code → meaning. */
function documentedCodes(): Map<number, string> {
  const doc = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");
  const section = doc.split("### Exit codes")[1]?.split("\n### ")[0] ?? "";
  const rows = new Map<number, string>();
  for (const line of section.split("\n")) {
    const m = /^\|\s*(\d+)\s*\|\s*(.+?)\s*\|$/.exec(line);
    if (m !== null) rows.set(Number(m[1]), m[2]!);
  }
  return rows;
}

/** Command lines that must exit with a given code, each with why. */
const CASES: Array<{ args: string[]; code: number; why: string }> = [
  { args: ["--version"], code: 0, why: "ok" },
  { args: ["ls"], code: 0, why: "ok: the default store does not exist yet" },
  { args: ["show", "deadbeef00"], code: 1, why: "an id not found" },
  { args: ["explain", "a.json", "b.json", "--exit-code"], code: 1, why: "identities differ" },
  { args: ["verify", "a.json"], code: 1, why: "verification failed (no stamp file)" },
  { args: ["frobnicate"], code: 2, why: "unknown command" },
  { args: ["ls", "--frob"], code: 2, why: "unknown option" },
  { args: ["id", "a.json", "--attempt", "-1"], code: 2, why: "malformed argument" },
  { args: ["completion"], code: 2, why: "missing argument" },
  { args: ["completion", "tcsh"], code: 2, why: "malformed argument" },
  // A missing input, for every command that reads one.
  { args: ["id", "missing.json"], code: 2, why: "missing input" },
  { args: ["normalize", "missing.txt"], code: 2, why: "missing input" },
  { args: ["explain", "missing.json", "a.json"], code: 2, why: "missing input" },
  { args: ["ls", "--cassette", "missing.yaml"], code: 2, why: "missing input" },
  { args: ["show", "deadbeef00", "--cassette", "missing.yaml"], code: 2, why: "missing input" },
  { args: ["stats", "--cassette", "missing.yaml"], code: 2, why: "missing input" },
  {
    args: ["prune", "--older-than", "1d", "--cassette", "missing.yaml"],
    code: 2,
    why: "missing input",
  },
  {
    args: ["prune", "--cassette", "x.yaml", "--unused", "missing.txt"],
    code: 2,
    why: "missing input",
  },
  { args: ["redact", "missing.yaml"], code: 2, why: "missing input" },
  { args: ["import", "missing.yaml", "--cassette", "x.yaml"], code: 2, why: "missing input" },
  { args: ["import", "a.json", "--cassette", "x.yaml"], code: 2, why: "format not told" },
  { args: ["import", "a.json"], code: 2, why: "no destination" },
  {
    args: ["stamp", "a.json", "--id", "deadbeef00", "--cassette", "missing.yaml"],
    code: 2,
    why: "missing input",
  },
  { args: ["ls", "--store", "sqlite://missing.sqlite"], code: 2, why: "missing input" },
  { args: ["stats", "--store", "sqlite://missing.sqlite"], code: 2, why: "missing input" },
];

describe("exit codes", () => {
  it("the table in docs/cli.md lists exactly the codes the CLI uses", () => {
    expect([...documentedCodes().keys()].sort()).toEqual(Object.values(EXIT).sort());
  });

  it.each(CASES.map((c) => ({ ...c, line: c.args.join(" ") })))(
    "invocache $line exits $code ($why)",
    ({ args, code }) => {
      const r = cli(args, { cwd });
      expect(r.status, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(code);
      // A usage error is one line that says what is wrong (a negative answer is on stdout).
      if (code === EXIT.usage) expect(r.stderr).toMatch(/^invocache: [^\n]+\n$/);
    },
  );

  it("a store that cannot be reached is an operation that failed (1), in one line", () => {
    const r = cli(["ls", "--store", `redis://127.0.0.1:${port}`], { cwd });
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("every documented code is produced by at least one case", () => {
    const produced = new Set(CASES.map((c) => c.code));
    for (const code of documentedCodes().keys())
      expect(produced.has(code), `code ${code}`).toBe(true);
  });
});
