/**
 * One writer at a time per cassette: an in-process queue (store handles in
 * one process never race each other or spin on the file lock) in front of a
 * cross-process lock from `proper-lockfile` (an atomic `mkdir` of a hidden
 * `.name.yaml.lock` directory beside the file, refreshed while held and taken
 * over once stale, so a writer killed with -9 blocks others for at most
 * `STALE_MS`). Reads never lock: writes are atomic renames.
 *
 * A lock can be lost while held: when the holder's event loop is blocked
 * past the stale threshold, proper-lockfile cannot refresh it and another
 * process takes it over. So holders keep the work under the lock short
 * (the store parses and merges outside it) and call
 * {@link HeldLock.assertHeld} right before the rename that publishes their
 * write: a lock that was lost, or that is close enough to stale that another
 * process could take it before the rename lands, fails the write instead of
 * letting it overwrite someone else's.
 */
import type { BigIntStats } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { makeDirectory } from "../files/index.js";

/** A lock not refreshed for this long belongs to a dead process (proper-lockfile's minimum is 2 s). */
export const STALE_MS = 5_000;

/** Default wait for the lock before giving up. */
export const LOCK_TIMEOUT_MS = 15_000;

const queues = new Map<string, Promise<void>>();

/** Options of {@link withFileLock}. */
export interface LockOptions {
  /** Give up after this long. Default {@link LOCK_TIMEOUT_MS}. */
  timeoutMs?: number;
  /**
   * A lock not refreshed for this long is taken over. Default
   * {@link STALE_MS}; at least 2,000 (proper-lockfile's floor). Raise it when
   * writing huge cassettes keeps the event loop busy for seconds.
   */
  staleMs?: number;
  /** Told when the lock was lost while held (another process judged it stale). */
  onCompromised?: (error: Error) => void;
}

/** The lock of a {@link withFileLock} callback. */
export interface HeldLock {
  /**
   * Throw (an Error with code `ELOCKLOST`) unless the lock is still ours
   * and fresh enough that nobody can take it over in the next moment.
   */
  assertHeld(): Promise<void>;
}

/** The lock directory of `file`. */
export function lockPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.lock`);
}

/**
 * Run `fn` holding the lock of `file` (absolute path). The file itself need
 * not exist; its directory is created.
 *
 * @example
 * await withFileLock("/abs/cassettes/a.yaml", async () => { … read, merge, write … });
 */
export async function withFileLock<T>(
  file: string,
  fn: (lock: HeldLock) => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  const previous = queues.get(file) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  const tail = previous.then(() => mine);
  queues.set(file, tail);
  try {
    await previous;
    const state = { lost: undefined as Error | undefined };
    const release = await acquire(file, {
      ...opts,
      onCompromised: (error) => {
        state.lost = error;
        opts.onCompromised?.(error);
      },
    });
    const stale = staleOf(opts);
    const mine = await stat(lockPath(file), { bigint: true });
    const held: HeldLock = {
      async assertHeld() {
        const lost = (why: string, cause?: unknown) =>
          Object.assign(new Error(`lost the lock ${lockPath(file)}: ${why}`, { cause }), {
            code: "ELOCKLOST",
          });
        if (state.lost !== undefined) throw lost(state.lost.message, state.lost);
        let now: BigIntStats;
        try {
          now = await stat(lockPath(file), { bigint: true });
        } catch (error) {
          throw lost("the lock directory is gone (another process took it over)", error);
        }
        if (now.ino !== mine.ino || now.birthtimeNs !== mine.birthtimeNs) {
          throw lost("another process took it over");
        }
        // Others take a lock over once its mtime is `stale` old. Ours must be
        // clearly younger, so the rename that follows lands before anyone can.
        const age = Date.now() - Number(now.mtimeMs);
        if (age > stale - Math.max(stale / 4, 500)) {
          throw lost(`not refreshed for ${Math.round(age)} ms (stale after ${stale} ms)`);
        }
      },
    };
    try {
      return await fn(held);
    } finally {
      await release().catch(() => {}); // already released if compromised
    }
  } finally {
    done();
    if (queues.get(file) === tail) queues.delete(file);
  }
}

/**
 * proper-lockfile, imported on the first lock: it and graceful-fs (which
 * patches `fs` when loaded) took ~150 ms of importing invocache's root, and
 * a replay that never writes a cassette never needs them.
 */
let lockModule: Promise<typeof import("proper-lockfile")> | undefined;

async function acquire(file: string, opts: LockOptions): Promise<() => Promise<void>> {
  lockModule ??= import("proper-lockfile");
  const { lock } = await lockModule;
  await makeDirectory(dirname(file));
  const deadline = Date.now() + (opts.timeoutMs ?? LOCK_TIMEOUT_MS);
  const stale = staleOf(opts);
  let delay = 5;
  for (;;) {
    try {
      return await lock(file, {
        realpath: false,
        lockfilePath: lockPath(file),
        stale,
        update: Math.max(stale / 5, 1_000),
        retries: 0,
        // The default throws from a timer and kills the process.
        onCompromised: opts.onCompromised ?? (() => {}),
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw error;
      if (Date.now() >= deadline) {
        throw new Error(
          `timed out after ${opts.timeoutMs ?? LOCK_TIMEOUT_MS} ms waiting for the lock ${lockPath(file)} (another process is writing this cassette; a dead one's lock expires after ${stale} ms)`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
      delay = Math.min(delay * 2, 100);
    }
  }
}

function staleOf(opts: LockOptions): number {
  return Math.max(opts.staleMs ?? STALE_MS, 2_000);
}
