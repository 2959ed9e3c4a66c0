/**
 * `mkdir -p` that always settles.
 *
 * Node's `mkdir(path, { recursive: true })` never settles (and spins one core)
 * when `mkdir` answers ENOENT although the parent exists — procfs does that
 * for any new name: it takes ENOENT for "parent missing", makes the parent
 * (EEXIST, fine) and tries again, forever. This walk makes each missing level
 * itself and treats a second ENOENT, after its parent is known to exist, as
 * the final answer.
 */
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";

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
}
