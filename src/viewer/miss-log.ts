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
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import {
  appendMiss,
  MISS_LOG_LIMIT,
  type MissRecord,
  missLogPath,
  type Recorder,
  recorderMissLog,
} from "../recorder/index.js";

export { appendMiss, MISS_LOG_LIMIT, type MissRecord, missLogPath };

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
  // The recorder logs its replay misses there already (its `missLog` option).
  if (recorderMissLog(recorder) === file) return () => {};
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

/**
 * The miss log the viewer shows for a source: a store's (beside a
 * `sqlite://` file, else under `.invocache/`); for cassettes, the log beside
 * them when one exists (`logMisses` with that path), else the nearest
 * `.invocache/` log above them (the project's, where a recorder on a
 * cassette logs by default), else the working directory's.
 *
 * @example
 * viewerMissLog({ cassette: "cassettes" }, "cassette://cassettes")
 */
export function viewerMissLog(
  location: { store: string } | { cassette: string },
  url: string,
  cwd = process.cwd(),
): string {
  if ("store" in location) return missLogPath({ store: url }, cwd);
  const beside = missLogPath({ cassette: location.cassette }, cwd);
  if (existsSync(beside)) return beside;
  // The project's: the nearest `.invocache/` log above the cassettes (a recorder's projectRoot).
  for (let dir = resolve(cwd, location.cassette); ; ) {
    const log = missLogPath({ store: "cassette://" }, dir);
    if (existsSync(log)) return log;
    const up = dirname(dir);
    if (up === dir) return missLogPath({ store: "cassette://" }, cwd);
    dir = up;
  }
}
