/**
 * Leases for cross-process single-flight on a cassette. They are transient
 * (seconds), so they live beside the cassette in a hidden JSON file, never in
 * it: a committed cassette must not change because a test was recording.
 * Every lease operation holds the cassette's file lock, which makes
 * check-and-take atomic across processes; the file is deleted once empty.
 *
 * Written like the cassette (an exclusively created temp file with a random
 * name, renamed into place) and read without following a symlink, so another
 * local user who can write the folder cannot plant a link that makes us
 * overwrite one of our own files.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type LockOptions, withFileLock } from "./lock.js";

type Leases = Record<string, { owner: string; expires: number }>;

/** The lease file of `file`. */
export function leasePath(file: string): string {
  return join(dirname(file), `.${basename(file)}.leases.json`);
}

/**
 * Take or renew the lease `key` for `owner`; false when someone else holds a live one.
 *
 * @example
 * await acquireFileLease("/abs/c.yaml", "ns:lease:…:0", "worker-1", 30_000) // true
 */
export function acquireFileLease(
  file: string,
  key: string,
  owner: string,
  ttlMs: number,
  lockOpts?: LockOptions,
): Promise<boolean> {
  return withFileLock(
    file,
    async () => {
      const now = Date.now();
      const leases = await readLeases(file, now);
      const held = leases[key];
      if (held !== undefined && held.owner !== owner) return false;
      leases[key] = { owner, expires: now + ttlMs };
      await writeLeases(file, leases);
      return true;
    },
    lockOpts,
  );
}

/**
 * Release the lease `key` if `owner` holds it.
 *
 * @example
 * await releaseFileLease("/abs/c.yaml", "ns:lease:…:0", "worker-1")
 */
export function releaseFileLease(
  file: string,
  key: string,
  owner: string,
  lockOpts?: LockOptions,
): Promise<void> {
  return withFileLock(
    file,
    async () => {
      const leases = await readLeases(file, Date.now());
      if (leases[key]?.owner !== owner) return;
      delete leases[key];
      await writeLeases(file, leases);
    },
    lockOpts,
  );
}

/** The live leases (expired ones dropped). A missing or unreadable file has none. */
async function readLeases(file: string, now: number): Promise<Leases> {
  let parsed: unknown;
  try {
    const handle = await open(leasePath(file), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      parsed = JSON.parse(await handle.readFile("utf8"));
    } finally {
      await handle.close();
    }
  } catch {
    return Object.create(null) as Leases;
  }
  const live = Object.create(null) as Leases;
  if (typeof parsed !== "object" || parsed === null) return live;
  for (const [key, lease] of Object.entries(parsed as Record<string, unknown>)) {
    const l = lease as { owner?: unknown; expires?: unknown };
    if (typeof l?.owner === "string" && typeof l.expires === "number" && l.expires > now) {
      live[key] = { owner: l.owner, expires: l.expires };
    }
  }
  return live;
}

async function writeLeases(file: string, leases: Leases): Promise<void> {
  const path = leasePath(file);
  if (Object.keys(leases).length === 0) {
    await unlink(path).catch(() => {});
    return;
  }
  // A torn lease file would read as "no leases" (at worst two processes record
  // the same call, the recorder's fallback anyway), but the rename means there is none.
  const temp = join(
    dirname(path),
    `.${basename(file)}.leases.${process.pid}-${randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    const handle = await open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(JSON.stringify(leases));
    } finally {
      await handle.close();
    }
    await rename(temp, path); // replaces a planted symlink itself, never its target
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}
