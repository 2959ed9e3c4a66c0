/**
 * `mkdir -p` that always settles.
 *
 * Node's `mkdir(path, { recursive: true })` never settles (and spins one core)
 * when `mkdir` answers ENOENT although the parent exists — procfs does that
 * for any new name: it takes ENOENT for "parent missing", makes the parent
 * (EEXIST, fine) and tries again, forever. This walk makes each missing level
 * itself and treats a second ENOENT, after its parent is known to exist, as
 * the final answer.
 *
 * A `.invocache` folder it creates gets a `.gitignore` of `*`, the way pytest
 * keeps `.pytest_cache` out of git: the cache, the demo's output and the
 * miss log are local state, never something to commit by accident.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** The folder invocache keeps its local state in (store, demo output, miss log). */
export const STATE_FOLDER = ".invocache";

/**
 * Make `dir` and every missing parent; resolve when it exists as a folder.
 * Rejects with the system error (ENOENT, ENOTDIR, EACCES, …) when a level
 * cannot be made.
 *
 * @example
 * await makeDirectory(join(project, "cassettes", "suite"));
 */
export async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    await ignoreIfState(dir);
    return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      if ((await stat(dir)).isDirectory()) return;
      throw e;
    }
    if (code !== "ENOENT") throw e;
    const parent = dirname(dir);
    if (parent === dir) throw e;
    await makeDirectory(parent);
  }
  // The parent exists now: an ENOENT this time is the file system's answer.
  try {
    await mkdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST" && (await stat(dir)).isDirectory()) return;
    throw e;
  }
  await ignoreIfState(dir);
}

/**
 * `dir` was just created: when it is a `.invocache` folder, ignore all of it
 * in git. Only a folder we created (a user's own `.invocache` is theirs),
 * and never fatal: an unwritable `.gitignore` must not stop the cache.
 */
async function ignoreIfState(dir: string): Promise<void> {
  if (basename(dir) !== STATE_FOLDER) return;
  await writeFile(
    join(dir, ".gitignore"),
    "# Created by invocache: its local state (cache, demo output, miss log) stays out of git.\n*\n",
    { flag: "wx" },
  ).catch(() => {});
}
