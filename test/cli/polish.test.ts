/**
 * First-run edges: messages that say what is wrong, folders of cassettes,
 * bounded input, the version from package.json, the demo's suggestions on a
 * memory store, and shell completion checked by the real shells.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  cpSync,
  mkdirSync,
  openSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder, invocationIdentity } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, builtCli, cli, ROOT } from "./helpers.js";

const cwd = tempDir("cli-polish");

const plan = { role: "planner", model: "gpt-5", prompt: "Plan the app" };
const build = { role: "builder", model: "gpt-5", prompt: "Build the app" };

async function record(file: string, requests: ReadonlyArray<typeof plan>): Promise<void> {
  mkdirSync(dirname(file), { recursive: true });
  const store = cassetteStore(file, { env: {}, parseCache: false });
  const recorder = createRecorder({ store, mode: "auto" });
  for (const req of requests) await recorder.call(req, async () => ({ text: `${req.role} ok` }));
  await recorder.close();
  await store.close();
}

beforeAll(async () => {
  await buildCli();
  await record(join(cwd, "cassettes", "planner.yaml"), [plan]);
  await record(join(cwd, "cassettes", "nested", "builder.yml"), [build]);
  writeFileSync(join(cwd, "cassettes", "notes.txt"), "not a cassette");
  writeFileSync(join(cwd, "req.json"), JSON.stringify(plan));
}, BUILD_TIMEOUT);

describe("messages", () => {
  it("--attempt -1 says it must be an integer >= 0 (it has a value)", () => {
    const r = cli(["id", "req.json", "--attempt", "-1"], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('invocache: --attempt must be an integer >= 0, got "-1"\n');
    const occ = cli(["show", "deadbeef00", "--occurrence", "-2"], { cwd });
    expect(occ.stderr).toMatch(/--occurrence must be an integer >= 0, got "-2"/);
  });

  it("a store error has one prefix and says what was being listed and why it failed", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const r = cli(["ls", "--store", `redis://127.0.0.1:${port}`, "--namespace", "ci"], { cwd });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^invocache: cannot list the entries of namespace "ci" in redis://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; check that the server is running`,
      ),
    );
    expect(r.stderr.match(/invocache/g)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/list "" failed/);
  });
});

describe("--cassette <folder>", () => {
  it("ls lists every cassette under it, with the file of each entry", () => {
    const r = cli(["ls", "--cassette", "cassettes", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const rows = r
      .json<{ entries: Array<{ role: string; cassette: string }> }>()
      .entries.map((e) => [e.cassette, e.role])
      .sort();
    expect(rows).toEqual([
      ["nested/builder.yml", "builder"],
      ["planner.yaml", "planner"],
    ]);
    const human = cli(["ls", "--cassette", "cassettes"], { cwd });
    expect(human.stdout).toMatch(/^cassette\s+id/);
    expect(human.stdout).toMatch(/2 entries .* in cassette:\/\/cassettes \(2 cassettes\)/);
  });

  it("show and stats read a folder too", () => {
    const id = invocationIdentity(build);
    const show = cli(["show", id.slice(0, 10), "--cassette", "cassettes"], { cwd });
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/role\s+builder/);
    const stats = cli(["stats", "--cassette", "cassettes", "--json"], { cwd });
    expect(stats.json<{ entries: number }>().entries).toBe(2);
  });

  it("an empty folder says how many cassettes it held", () => {
    mkdirSync(join(cwd, "empty"), { recursive: true });
    const r = cli(["ls", "--cassette", "empty"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("No entries in cassette://empty (0 cassettes).\n");
  });

  it("redact takes a folder", () => {
    const r = cli(["redact", "cassettes", "--check", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(
      r
        .json<{ files: Array<{ file: string }> }>()
        .files.map((f) => f.file)
        .sort(),
    ).toEqual([join("cassettes", "nested", "builder.yml"), join("cassettes", "planner.yaml")]);
  });
});

describe("bounded input", () => {
  it("normalize /dev/zero stops at the limit and names it and the flag", () => {
    const r = cli(["normalize", "/dev/zero"], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^invocache: \/dev\/zero is larger than 64\.0 MiB, the most this command reads; pass --max-bytes/,
    );
  });

  it("stdin from /dev/zero too", () => {
    const fd = openSync("/dev/zero", "r");
    try {
      const r = cli(["normalize", "-", "--max-bytes", "1MiB"], { cwd, stdinFd: fd });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^invocache: stdin is larger than 1\.0 MiB/);
    } finally {
      closeSync(fd);
    }
  });

  it("--max-bytes raises or lowers the limit", () => {
    writeFileSync(join(cwd, "prompt.txt"), "word ".repeat(1000));
    expect(cli(["normalize", "prompt.txt", "--max-bytes", "4KiB"], { cwd }).status).toBe(2);
    const ok = cli(["normalize", "prompt.txt", "--max-bytes", "5000"], { cwd });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(`${"word ".repeat(1000).trim()}\n`);
    const bad = cli(["normalize", "prompt.txt", "--max-bytes", "lots"], { cwd });
    expect(bad.stderr).toMatch(/--max-bytes must be a size such as 1048576, 64MiB or 1GB/);
  });
});

describe("--version", () => {
  it("reads the version from the package.json next to the installed code", () => {
    // A copy of the build laid out like an installed package, with another version.
    const pkg = join(cwd, "pkg");
    cpSync(dirname(dirname(builtCli())), join(pkg, "dist"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"));
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "invocache", version: "9.8.7-test" }),
    );
    const r = spawnSync(process.execPath, [join(pkg, "dist", "cli", "main.js"), "--version"], {
      encoding: "utf8",
    });
    expect(r.stdout).toBe("9.8.7-test\n");
    const mine = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(cli(["--version"], { cwd }).stdout).toBe(`${mine.version}\n`);
  });
});

describe("demo --store memory://", () => {
  it("suggests only follow-up commands that work, and says why", () => {
    const r = cli(["demo", "--store", "memory://"], {
      cwd,
      env: { npm_lifecycle_event: undefined },
    });
    expect(r.status, r.stderr).toBe(0);
    const after = r.stdout.split("Look around")[1] ?? "";
    expect(after).not.toMatch(/invocache (ls|show|explain)/);
    expect(after).toMatch(/memory:\/\/ store is gone with the demo/);
    const suggested = [...after.matchAll(/^ {2}invocache (.+)$/gm)].map((m) => m[1]!.split(" "));
    expect(suggested.length).toBeGreaterThan(0);
    for (const args of suggested) {
      const run = cli(args, { cwd });
      expect(run.status, `${args.join(" ")}: ${run.stdout}${run.stderr}`).toBe(0);
    }
  }, 60_000);
});

describe("invocache completion", () => {
  const script = (shell: string) => {
    const r = cli(["completion", shell], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const file = join(cwd, `completion.${shell}`);
    writeFileSync(file, r.stdout);
    return { text: r.stdout, file };
  };

  it("bash: sourcing it registers the completion, which completes commands and options", () => {
    const { file } = script("bash");
    const bash = (body: string) =>
      spawnSync("bash", ["--norc", "-c", `source ${JSON.stringify(file)}\n${body}`], {
        encoding: "utf8",
      });
    const registered = bash("complete -p invocache");
    expect(registered.status, registered.stderr).toBe(0);
    expect(registered.stdout).toBe("complete -o default -F _invocache invocache\n");
    const complete = (...words: string[]) => {
      const r = bash(
        `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _invocache; printf '%s\\n' "\${COMPREPLY[@]}"`,
      );
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.split("\n").filter(Boolean);
    };
    expect(complete("invocache", "s")).toEqual(["show", "stats", "stamp"]);
    expect(complete("invocache", "ls", "--st")).toEqual(["--store"]);
    expect(complete("invocache", "prune", "--d")).toEqual(["--dry-run"]);
    expect(complete("invocache", "completion", "")).toEqual(["bash", "zsh", "fish"]);
    expect(complete("invocache", "--v")).toEqual(["--version"]);
  });

  it("zsh and fish: every command and its options, in each shell's syntax", () => {
    const zsh = script("zsh").text;
    expect(zsh.startsWith("#compdef invocache\n")).toBe(true);
    expect(zsh).toMatch(/compdef _invocache invocache/);
    const fish = script("fish").text;
    for (const command of ["demo", "ls", "show", "prune", "redact", "verify", "completion"]) {
      expect(zsh).toContain(`'${command}:`);
      expect(fish).toMatch(new RegExp(`-n '__fish_use_subcommand' -f -a ${command} -d `));
    }
    expect(fish).toMatch(/-n '__fish_seen_subcommand_from ls' -l store -r -d /);
    expect(fish).toMatch(/-n '__fish_seen_subcommand_from prune' -l dry-run -s n -d /);
    // The shells themselves parse the scripts when they are installed.
    for (const [shell, args] of [
      ["zsh", ["-n", join(cwd, "completion.zsh")]],
      ["fish", ["--no-execute", join(cwd, "completion.fish")]],
    ] as const) {
      const r = spawnSync(shell, args, { encoding: "utf8" });
      if (r.error !== undefined && (r.error as NodeJS.ErrnoException).code === "ENOENT") continue;
      expect(r.status, `${shell}: ${r.stderr}`).toBe(0);
      if (shell !== "fish") continue;
      // fish can also be asked what it would complete.
      const complete = (line: string) => {
        const c = spawnSync(
          "fish",
          [
            "-c",
            `source ${JSON.stringify(join(cwd, "completion.fish"))}; complete -C ${JSON.stringify(line)}`,
          ],
          { encoding: "utf8" },
        );
        return c.stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split("\t")[0]);
      };
      expect(complete("invocache ls --st")).toEqual(["--store"]);
      expect(complete("invocache s")).toEqual(["show", "stamp", "stats"]);
      expect(complete("invocache completion ")).toEqual(["bash", "fish", "zsh"]);
    }
  });
});
