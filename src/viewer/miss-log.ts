/**
 * The miss log: replay misses kept for later, so `invocache view` can show
 * them after the test run that hit them. A small JSON Lines file in a
 * self-ignoring folder beside the store or the cassettes
 * (`.invocache-misses/misses.jsonl`, with a `.gitignore` of `*`, the way
 * pytest keeps its cache out of git), bounded to the newest
 * {@link MISS_LOG_LIMIT} misses. What it keeps is what the recorder already
 * publishes: the identity, occurrence and normalized manifest (secrets are
 * `{secret:NAME}` there, as in the store), never a raw prompt.
 */
import { appendFile, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { makeDirectory } from "../files/index.js";
import type { Manifest } from "../identity/index.js";
import type { Recorder } from "../recorder/index.js";

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

/**
 * The logged misses, newest first (at most {@link MISS_LOG_LIMIT}). A
 * missing file is an empty log; unreadable lines are skipped.
 *
 * @example
 * const misses = await readMissLog(missLogPath({ cassette: "cassettes" }));
 */
export async function readMissLog(path: string): Promise<MissRecord[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return [];
  }
  const out: MissRecord[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const r = JSON.parse(line) as MissRecord;
      if (typeof r.id === "string" && typeof r.key === "string") out.push(r);
    } catch {
      // a torn last line from a crashed writer
    }
  }
  return out.reverse().slice(0, MISS_LOG_LIMIT);
}

/**
 * Log every miss of `recorder` to `path` (default: {@link missLogPath} of
 * its store). Returns the function that stops logging.
 *
 * @example
 * const stop = logMisses(recorder);
 */
export function logMisses(recorder: Recorder, path?: string): () => void {
  const file = path ?? missLogPath({ store: recorder.store.url });
  const pending = new Set<Promise<void>>();
  const off = recorder.on("miss", (e) => {
    const record: MissRecord = {
      at: new Date().toISOString(),
      id: e.id,
      occurrence: e.occurrence,
      key: e.key,
      mode: e.mode,
      store: recorder.store.url,
      manifest: e.manifest,
    };
    const p = appendMiss(file, record).finally(() => pending.delete(p));
    pending.add(p);
  });
  return off;
}
