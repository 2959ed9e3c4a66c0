/**
 * The command's conventions: --help with examples on every command, exit
 * codes, one-line usage errors, --json errors, colors only when allowed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli, ROOT } from "./helpers.js";

const COMMANDS = [
  "demo",
  "id",
  "normalize",
  "explain",
  "ls",
  "show",
  "stats",
  "prune",
  "import",
  "migrate-store",
  "redact",
  "rekey",
  "diff",
  "stamp",
  "verify",
];

const cwd = tempDir("cli-usage");
beforeAll(buildCli, BUILD_TIMEOUT);

/** A usage error: exit 2, nothing on stdout, exactly one line on stderr. */
function expectUsageError(args: string[], pattern: RegExp) {
  const r = cli(args, { cwd });
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(r.stderr).toMatch(/^invocache: /);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe("help", () => {
  it("lists every command, the exit codes, and exits 0", () => {
    const r = cli(["--help"], { cwd });
    expect(r.status).toBe(0);
    for (const name of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
    expect(r.stdout).toMatch(/Exit codes:/);
    expect(r.stdout).toMatch(/2 {2}usage error/);
  });

  it("without a command prints the help and exits 2", () => {
    const r = cli([], { cwd });
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/^Usage: invocache <command>/);
  });

  it.each(COMMANDS)("invocache %s --help has a usage line and examples", (name) => {
    const r = cli([name, "--help"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: invocache ${name}`));
    expect(r.stdout).toMatch(/\nExamples:\n {2}invocache /);
    expect(r.stdout).toMatch(/--json/);
  });

  it("help <command> and -h print the same help as --help", () => {
    const help = cli(["ls", "--help"], { cwd }).stdout;
    expect(cli(["help", "ls"], { cwd }).stdout).toBe(help);
    expect(cli(["ls", "-h"], { cwd }).stdout).toBe(help);
    expect(cli(["ls", "--store", "memory://", "--help"], { cwd }).stdout).toBe(help);
  });

  it("--version prints the package version", () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    const r = cli(["--version"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
  });
});

describe("usage errors exit 2 with one line that says what to do", () => {
  it("unknown command, with a suggestion", () => {
    expectUsageError(
      ["lss"],
      /unknown command "lss" \(did you mean ls\?\); see `invocache --help`/,
    );
    expectUsageError(["frobnicate"], /unknown command "frobnicate"; see `invocache --help`/);
  });

  it("an option before the command", () => {
    expectUsageError(
      ["--store", "x"],
      /--store must come after a command, e.g. invocache ls --store/,
    );
  });

  it("unknown option, with a suggestion", () => {
    expectUsageError(
      ["ls", "--stor", "x"],
      /ls: unknown option --stor \(did you mean --store\?\); see `invocache ls --help`/,
    );
    expectUsageError(
      ["verify", "--bogus", "a"],
      /verify: unknown option --bogus; see `invocache verify --help`/,
    );
  });

  it("missing option value", () => {
    expectUsageError(["ls", "--store"], /ls: --store needs a value/);
  });

  it("missing and extra arguments", () => {
    expectUsageError(["show"], /show: missing <prefix>/);
    expectUsageError(["id"], /id: missing <request file or ->/);
    expectUsageError(["explain", "a.json"], /explain: missing <a> <b>/);
    expectUsageError(["verify"], /verify: missing <artifact>/);
    expectUsageError(["ls", "extra"], /ls takes no arguments, got "extra"/);
    expectUsageError(["stamp", "a.txt"], /stamp: missing --id <prefix>/);
  });

  it("malformed values", () => {
    expectUsageError(["show", "abc"], /prefix "abc" must be 8 to 64 hex characters/);
    expectUsageError(["show", "zzzzzzzz"], /must be 8 to 64 hex characters/);
    expectUsageError(
      ["id", "missing.json"],
      /cannot read missing\.json: no such file; pass a file path, or - for stdin/,
    );
    expectUsageError(["id", "-", "--attempt", "1.5"], /--attempt must be an integer >= 0/);
    expectUsageError(
      ["ls", "--store", "ftp://x"],
      /--store: url "ftp:\/\/x" has an unknown scheme "ftp:"/,
    );
    expectUsageError(
      ["ls", "--store", "memory://", "--cassette", "a.yaml"],
      /pass --store or --cassette, not both/,
    );
    expectUsageError(["ls", "--namespace", "a:b"], /--namespace: namespace must be/);
    expectUsageError(["prune"], /prune: say what to remove with --older-than/);
    expectUsageError(
      ["prune", "--older-than", "soon"],
      /--older-than must be a duration such as 30d/,
    );
    expectUsageError(["prune", "--unused", "-"], /--unused applies to a cassette/);
    expectUsageError(["normalize", "-", "--root", "nope"], /--root "nope" must be NAME=DIR/);
  });

  it("a usage error under --json also prints a JSON error object", () => {
    const r = cli(["show", "abc", "--json"], { cwd });
    expect(r.status).toBe(2);
    expect(r.json()).toEqual({
      error: {
        code: "ERR_USAGE",
        message: expect.stringMatching(/must be 8 to 64 hex characters/),
        exitCode: 2,
      },
    });
  });
});

describe("bad input is a usage error naming the file and the field", () => {
  it("a request without a role", () => {
    const r = cli(["id", "-"], { cwd, input: '{"prompt":"hi"}' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^invocache: stdin: request\.role must be a non-empty string/);
  });

  it("a document that is neither JSON nor YAML", () => {
    const r = cli(["id", "-"], { cwd, input: "{ role: [" });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/stdin is neither JSON nor YAML/);
  });
});

describe("colors", () => {
  const color = (env: Record<string, string>) => cli(["verify", "nothing-here.txt"], { cwd, env });

  it("none when stdout is not a terminal", () => {
    const r = color({});
    expect(r.status).toBe(1);
    expect(r.stdout + r.stderr).not.toMatch(/\x1b\[/);
  });

  it("FORCE_COLOR forces them, NO_COLOR and FORCE_COLOR=0 turn them off", () => {
    expect(color({ FORCE_COLOR: "1" }).stdout).toMatch(/\x1b\[31mFAIL/);
    expect(color({ FORCE_COLOR: "1", NO_COLOR: "1" }).stdout).not.toMatch(/\x1b\[/);
    expect(color({ FORCE_COLOR: "0" }).stdout).not.toMatch(/\x1b\[/);
  });
});

describe("unexpected errors", () => {
  it("are one line without a stack trace, and with INVOCACHE_DEBUG=1 show it", () => {
    // A file that is not a SQLite database: an error from deep inside the driver.
    writeFileSync(join(cwd, "not-a-db.sqlite"), "hello\n");
    const plain = cli(["ls", "--store", "sqlite://not-a-db.sqlite"], { cwd });
    expect(plain.status).toBe(1);
    expect(plain.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(plain.stderr).toMatch(/file is not a database/);
    const debug = cli(["ls", "--store", "sqlite://not-a-db.sqlite"], {
      cwd,
      env: { INVOCACHE_DEBUG: "1" },
    });
    expect(debug.status).toBe(1);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});
