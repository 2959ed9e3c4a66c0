/**
 * The miss log's file: where replay misses are kept (bounded, in a
 * self-ignoring `.invocache-misses/` folder, by default under the project's
 * git-ignored `.invocache/`) and how one is appended. The recorder logs every
 * replay miss here by default (`missLog` option), so `invocache view` shows
 * them without any setup; the viewer reads it (src/viewer/miss-log.ts).
 */
import { appendFile, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { makeDirectory } from "../files/index.js";
import type { Manifest } from "../identity/index.js";

/** Misses kept; older ones are dropped when the log is compacted. */
export const MISS_LOG_LIMIT = 200;
const FOLDER = ".invocache-misses";

/** One logged miss. */
export interface MissRecord {
  /** ISO-8601 time of the miss. */
  at: string;
  id: string;
  occurrence: number;
  key: string;
  mode: string;
  /** The store or cassette the recorder read. */
  store: string;
  /** The normalized manifest of the call that missed, when the recorder reported it. */
  manifest?: Manifest;
}

/**
 * The miss log file for a store URL (`sqlite://…`: beside the database
 * file; other stores: under the working directory) or a cassette path
 * (beside the file, or inside the folder).
 *
 * @example
 * missLogPath({ store: "sqlite://.invocache/cache.sqlite" }) // <abs>/.invocache/.invocache-misses/misses.jsonl
 */
export function missLogPath(
  location: { store: string } | { cassette: string; folder?: boolean },
  cwd = process.cwd(),
): string {
  if ("cassette" in location) {
    const base = resolve(cwd, location.cassette);
    const dir = location.folder === true || !/\.ya?ml$/.test(base) ? base : dirname(base);
    return join(dir, FOLDER, "misses.jsonl");
  }
  const m = /^sqlite:\/\/(.+)$/.exec(location.store);
  const dir = m ? dirname(resolve(cwd, decodeURIComponent(m[1]!))) : resolve(cwd, ".invocache");
  return join(dir, FOLDER, "misses.jsonl");
}

/**
 * Append one miss; compact the file to the newest {@link MISS_LOG_LIMIT}
 * once it holds twice that many. Never throws: losing a log line must not
 * fail the test that missed.
 *
 * @example
 * await appendMiss(path, { at: new Date().toISOString(), id, occurrence: 0, key, mode: "replay", store: url });
 */
export async function appendMiss(path: string, record: MissRecord): Promise<void> {
  try {
    const dir = dirname(path);
    await makeDirectory(dir);
    await writeFile(join(dir, ".gitignore"), "*\n", { flag: "wx" }).catch(() => {});
    await appendFile(path, `${JSON.stringify(record)}\n`);
    const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l !== "");
    if (lines.length > 2 * MISS_LOG_LIMIT) {
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, `${lines.slice(-MISS_LOG_LIMIT).join("\n")}\n`);
      await rename(tmp, path);
    }
  } catch {
    // Observability only: see above.
  }
}

/** The file each recorder logs its replay misses to, when it does (see `recorderMissLog`). */
const logs = new WeakMap<object, string>();

/**
 * Where a recorder logs replay misses: the `missLog` option, else beside a
 * `sqlite://` store, else under `<projectRoot>/.invocache/`; none for
 * `memory://` (nothing of it outlives the process) or `missLog: false`.
 */
export function missLogFor(
  storeUrl: string,
  option: string | false | undefined,
  root: string,
): string | undefined {
  if (option === false) return undefined;
  if (option !== undefined) return resolve(root, option);
  if (storeUrl.startsWith("memory://")) return undefined;
  return missLogPath({ store: storeUrl }, root);
}

/** Remember that `recorder` logs its misses to `path` (so `logMisses` does not log them twice). */
export function rememberMissLog(recorder: object, path: string | undefined): void {
  if (path !== undefined) logs.set(recorder, path);
}

/** The file `recorder` logs its replay misses to by itself, if any. */
export function recorderMissLog(recorder: object): string | undefined {
  return logs.get(recorder);
}
