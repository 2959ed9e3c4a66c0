/**
 * File I/O for cassettes: consistent reads, atomic writes, change detection.
 *
 * Atomic write (the classic recipe, e.g. LWN "ext4 and data loss", 2009):
 * write a temp file in the same directory (rename is only atomic within one
 * filesystem), fsync it (the data is on disk before the name points at it),
 * rename over the target (readers see the old file or the new one, never a
 * torn one), fsync the directory (the rename itself survives a crash). A
 * process killed at any point leaves the old file, the new file, and at
 * worst an orphaned temp file, which the next writer removes.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { makeDirectory } from "../files/index.js";

/** What identifies one version of a file without reading it (git's index uses the same fields). */
export interface FileStamp {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  dev: bigint;
  /** Permission bits (`st_mode & 0o7777`). */
  mode: number;
}

/** Whether two stamps describe the same version of a file. */
export function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs &&
    a.ino === b.ino &&
    a.dev === b.dev &&
    a.mode === b.mode
  );
}

function toStamp(s: {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  dev: bigint;
  mode: bigint;
}): FileStamp {
  return {
    size: s.size,
    mtimeNs: s.mtimeNs,
    ctimeNs: s.ctimeNs,
    ino: s.ino,
    dev: s.dev,
    mode: Number(s.mode & 0o7777n),
  };
}

/** The stamp of `path`, or undefined when it does not exist. */
export async function statStamp(path: string): Promise<FileStamp | undefined> {
  try {
    return toStamp(await stat(path, { bigint: true }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Thrown by {@link readWithStamp} for a file over its size limit, before reading it. */
export class FileTooBigError extends Error {
  constructor(
    readonly path: string,
    readonly size: bigint,
    readonly limit: number,
  ) {
    super(`${path} is ${size} bytes, over the limit of ${limit}`);
    this.name = "FileTooBigError";
  }
}

/**
 * Read `path` and the stamp of exactly the version read (fstat of the open
 * handle, so a rename in between cannot mismatch them). Undefined when absent.
 * A file bigger than `maxBytes` is not read: {@link FileTooBigError}.
 */
export async function readWithStamp(
  path: string,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ bytes: Buffer; stamp: FileStamp } | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const stamp = toStamp(await handle.stat({ bigint: true }));
    if (stamp.size > BigInt(Math.min(maxBytes, Number.MAX_SAFE_INTEGER))) {
      throw new FileTooBigError(path, stamp.size, maxBytes);
    }
    const bytes = await handle.readFile();
    return { bytes, stamp };
  } finally {
    await handle.close();
  }
}

/**
 * Replace `path` with `data` atomically and durably (see the file comment).
 * Keeps the file mode of an existing file. Resolves to the new file's stamp.
 * `beforeRename` runs once the data is on disk, right before the rename; if
 * it throws, nothing is renamed (the temp file is removed) and the write
 * fails with its error.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Buffer,
  opts: { beforeRename?: () => Promise<void> } = {},
): Promise<FileStamp> {
  const dir = dirname(path);
  await makeDirectory(dir);
  const mode = await stat(path).then(
    (s) => s.mode & 0o7777,
    () => 0o666, // new file: the umask applies
  );
  const temp = join(dir, tempName(path));
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await opts.beforeRename?.();
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDir(dir);
  return toStamp(await stat(path, { bigint: true }));
}

/** `.name.yaml.<pid>-<random>.tmp`: hidden, and names the process that wrote it. */
function tempName(path: string): string {
  return `.${basename(path)}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
}

/** fsync a directory so a rename in it is durable. Not possible on Windows; skipped there. */
async function syncDir(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // EISDIR/EPERM/EINVAL where directories cannot be opened or synced.
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * Remove temp files of `path` left by writers that died mid-write (their
 * process no longer exists). Call with the file lock held.
 */
export async function removeOrphanTemps(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const pid = Number(/^(?:leases\.)?(\d+)-[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isSafeInteger(pid) || isAlive(pid)) continue;
    await unlink(join(dir, name)).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // exists, not ours
  }
}
