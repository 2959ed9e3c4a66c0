/**
 * The inspecting commands (ls, show, stats, explain) open the store
 * read-only: a store the user may read but not write can be inspected, a
 * missing store file is reported and never created, and an unreadable one
 * says why instead of "nothing recorded yet".
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createRecorder, invocationIdentity, openStore } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";
import { asUnprivileged, BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

// Give write access back so the folders can be removed.
const root = tempDir("cli-ro", () => {
  for (const d of [readOnlyDir, lockedProject, join(lockedProject, ".invocache")]) {
    if (existsSync(d)) chmodSync(d, 0o755);
  }
});

/** A project whose store the CLI user may read but not write (file 0444, folder 0555). */
const readOnlyDir = join(root, "readonly");
const readOnlyStore = join(readOnlyDir, "cache.sqlite");
/** A project whose .invocache folder the CLI user may not enter (0700, another owner or 000). */
const lockedProject = join(root, "locked");
const who = asUnprivileged();

const requests = [
  { role: "planner", model: "gpt-5", prompt: "Plan the app" },
  { role: "builder", model: "gpt-5", prompt: "Build the app" },
];
const ids = requests.map((r) => invocationIdentity(r));

async function seed(path: string): Promise<void> {
  const store = openStore(`sqlite://${path}`);
  const recorder = createRecorder({ store, mode: "auto", namespace: "ro" });
  for (const req of requests) await recorder.call(req, async () => ({ text: `${req.role} ok` }));
  await recorder.close();
  await store.close();
}

beforeAll(async () => {
  await buildCli();
  chmodSync(root, 0o755); // mkdtemp makes it 0700: the unprivileged user must enter it
  mkdirSync(readOnlyDir);
  await seed(readOnlyStore);
  chmodSync(readOnlyStore, 0o444);
  chmodSync(readOnlyDir, 0o555);
  mkdirSync(lockedProject);
  await seed(join(lockedProject, ".invocache", "cache.sqlite"));
  chmodSync(join(lockedProject, ".invocache"), who.uid === undefined ? 0o000 : 0o700);
}, BUILD_TIMEOUT);

describe("a store the user may read but not write", () => {
  const url = `sqlite://${readOnlyStore}`;

  it("ls, show, stats and explain read it", () => {
    const ls = cli(["ls", "--store", url, "--json"], { cwd: root, ...who });
    expect(ls.status, ls.stderr).toBe(0);
    expect(
      ls
        .json<{ entries: Array<{ id: string }> }>()
        .entries.map((e) => e.id)
        .sort(),
    ).toEqual([...ids].sort());
    const show = cli(["show", ids[0]!.slice(0, 10), "--store", url], { cwd: root, ...who });
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/role\s+planner/);
    const stats = cli(["stats", "--store", url, "--json"], { cwd: root, ...who });
    expect(stats.status, stats.stderr).toBe(0);
    expect(stats.json<{ entries: number }>().entries).toBe(2);
    const explain = cli(["explain", ids[0]!.slice(0, 10), ids[1]!.slice(0, 10), "--store", url], {
      cwd: root,
      ...who,
    });
    expect(explain.status, explain.stderr).toBe(0);
    expect(explain.stdout).toMatch(/role/);
  });

  it("prune, which writes, says the store cannot be written", () => {
    const r = cli(["prune", "--older-than", "1ms", "--store", url], { cwd: root, ...who });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^invocache: cannot /);
    expect(r.stderr).not.toMatch(/invocache store/);
  });
});

describe("a store file that does not exist", () => {
  it("--store to a missing file is a usage error (2) and creates nothing", () => {
    const missing = join(root, "nothing-here", "cache.sqlite");
    for (const command of ["ls", "stats", "prune --older-than 1d"]) {
      const r = cli([...command.split(" "), "--store", `sqlite://${missing}`], { cwd: root });
      expect(r.status, `${command}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/no such file or folder .*read-only commands never create a store/);
    }
    expect(existsSync(join(root, "nothing-here"))).toBe(false);
  });

  it("the default store, not there yet, is the first run: exit 0, nothing created", () => {
    const fresh = mkdtempSync(join(root, "fresh-"));
    const r = cli(["ls"], { cwd: fresh });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Nothing recorded yet/);
    expect(existsSync(join(fresh, ".invocache"))).toBe(false);
  });
});

describe("a store that cannot be read", () => {
  it("ls says permission denied instead of 'Nothing recorded yet'", () => {
    const r = cli(["ls"], { cwd: lockedProject, ...who });
    expect(r.status).toBe(1);
    expect(r.stdout).not.toMatch(/Nothing recorded yet/);
    expect(r.stderr).toMatch(
      /^invocache: cannot read sqlite:\/\/.*cache\.sqlite: permission denied/,
    );
    expect(r.stderr).toMatch(/check that you may read/);
  });
});
