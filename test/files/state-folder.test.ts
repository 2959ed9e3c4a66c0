/**
 * The `.invocache` folder invocache creates in a user's project ignores
 * itself in git (a `.gitignore` of `*`, as pytest does for its cache), so
 * the cache and the demo's output are never committed by accident. Checked
 * with the real git and the real default SQLite store.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_DIR: undefined } });

describe(".invocache ignores itself", () => {
  it("the default store creates .invocache with a .gitignore of *: git status stays clean", async () => {
    const project = tempDir("state-folder");
    git(project, "init", "-q");
    const recorder = createRecorder({ projectRoot: project, mode: "auto" });
    await recorder.call({ role: "r", model: "m", prompt: "p" }, async () => ({ ok: true }));
    await recorder.close();
    expect(existsSync(join(project, ".invocache", "cache.sqlite"))).toBe(true);
    expect(readFileSync(join(project, ".invocache", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    expect(git(project, "status", "--porcelain", "--untracked-files=all")).toBe("");
  });

  it("a .invocache folder the user made is left as it is", async () => {
    const project = tempDir("state-folder-own");
    mkdirSync(join(project, ".invocache"));
    const recorder = createRecorder({ projectRoot: project, mode: "auto" });
    await recorder.call({ role: "r", model: "m", prompt: "p" }, async () => ({ ok: true }));
    await recorder.close();
    expect(existsSync(join(project, ".invocache", "cache.sqlite"))).toBe(true);
    expect(existsSync(join(project, ".invocache", ".gitignore"))).toBe(false);
  });
});
