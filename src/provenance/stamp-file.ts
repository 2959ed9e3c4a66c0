/**
 * The stamp file's I/O: `<artifact>.intoto.jsonl`, JSON Lines, one stamp per
 * line (in-toto spec/v1/bundle.md). Appends are read-modify-write, made safe
 * the way cassettes are (design.md, "Entries and cassettes"):
 *
 * - under a lock: in process a promise chain per file, across processes
 *   `proper-lockfile` (an atomic `mkdir` of `<stamp>.lock`), so two stampers
 *   never both read the old file and one of their lines gets lost;
 * - atomically: the new content goes to a temp file in the same directory
 *   (a rename is only atomic within one file system), is fsynced, then
 *   renamed over the stamp file, and the directory is fsynced so the rename
 *   itself survives a crash. A reader sees the old file or the new one, never
 *   half a line;
 * - never on a broken file: a line that is not JSON is reported with its
 *   number and nothing is written, so a bad edit is not buried under new
 *   lines.
 */
import { randomUUID } from "node:crypto";
import { open, readFile, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { StampError } from "../errors.js";

const queues = new Map<string, Promise<unknown>>();

/** Run `fn` after every earlier call for the same file has settled (in this process). */
async function serialized<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const key = resolve(file);
  const before = queues.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, settled);
  try {
    return await run;
  } finally {
    if (queues.get(key) === settled) queues.delete(key);
  }
}

/**
 * Read the stamp file as text; `undefined` when it does not exist. Any other
 * failure (a directory, no permission) is a `StampError` (`ERR_STAMP_IO`).
 *
 * @example
 * const text = await readStampFile("plan.md.intoto.jsonl"); // undefined if never stamped
 */
export async function readStampFile(stampPath: string): Promise<string | undefined> {
  try {
    return await readFile(stampPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StampError(
      "ERR_STAMP_IO",
      `cannot read stamp file ${stampPath}: ${(error as Error).message}. Check that it is a readable file.`,
      { cause: error, path: stampPath },
    );
  }
}

/**
 * Append one line (no newline in it) to the stamp file, atomically and under a lock.
 *
 * @example
 * await appendStampLine("plan.md.intoto.jsonl", JSON.stringify(statement));
 */
export function appendStampLine(stampPath: string, line: string): Promise<void> {
  return serialized(stampPath, async () => {
    let compromised: Error | undefined;
    let release: () => Promise<void>;
    try {
      // Loaded on first stamp: proper-lockfile installs an exit handler when
      // imported, which an application that never stamps should not get.
      const { lock } = await import("proper-lockfile");
      release = await lock(stampPath, {
        realpath: false, // the stamp file may not exist yet
        stale: 10_000,
        retries: { retries: 100, factor: 1.3, minTimeout: 5, maxTimeout: 250 },
        // The default throws from a timer, which would crash the process.
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      throw new StampError(
        "ERR_STAMP_IO",
        `cannot lock stamp file ${stampPath}: ${(error as Error).message}. ` +
          `If no other process is stamping it, delete ${stampPath}.lock.`,
        { cause: error, path: stampPath },
      );
    }
    try {
      const existing = (await readStampFile(stampPath)) ?? "";
      checkLines(existing, stampPath);
      const separator = existing === "" || existing.endsWith("\n") ? "" : "\n";
      await writeAtomically(stampPath, `${existing}${separator}${line}\n`, () => compromised);
    } finally {
      await release().catch(() => undefined);
    }
  });
}

/** Refuse to append to a file with a line that is not JSON: report it, change nothing. */
function checkLines(text: string, stampPath: string): void {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.trim() === "") continue;
    try {
      JSON.parse(l);
    } catch (error) {
      throw new StampError(
        "ERR_STAMP_MALFORMED",
        `stamp file ${stampPath} line ${i + 1} is not JSON (${(error as Error).message}); ` +
          "nothing was written. Fix or delete that line (verifyStamp lists every problem), then stamp again.",
        { cause: error, path: stampPath, line: i + 1 },
      );
    }
  }
}

async function writeAtomically(
  target: string,
  content: string,
  compromised: () => Error | undefined,
): Promise<void> {
  const dir = dirname(target);
  const temp = join(dir, `.${basename(target)}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`);
  // Keep the mode of the file being replaced (a rename would reset it).
  const mode = await stat(target).then(
    (s) => s.mode & 0o777,
    () => 0o666,
  );
  try {
    const fh = await open(temp, "wx", mode);
    try {
      await fh.writeFile(content, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    const lost = compromised();
    if (lost !== undefined) throw lost;
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new StampError(
      "ERR_STAMP_IO",
      `cannot write stamp file ${target}: ${(error as Error).message}. Check that its directory is writable; the previous stamps are unchanged.`,
      { cause: error, path: target },
    );
  }
  await syncDirectory(dir);
}

/** fsync the directory so the rename is durable. Not possible everywhere (Windows): best effort. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const fh = await open(dir, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // The data itself is already fsynced; only the rename's durability is at stake.
  }
}
