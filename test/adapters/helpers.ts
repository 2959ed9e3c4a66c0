/** Shared setup for the adapter suites: temp SQLite stores, recorders, byte greps. */
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createRecorder, type Mode, type Recorder } from "../../src/index.js";
import { entryPrefix } from "../../src/store/index.js";
import { tempDir } from "../helpers/tmp.js";

/** A temp directory holding one SQLite store; `recorder(mode)` opens recorders on it. */
export async function sqliteSandbox(): Promise<{
  dir: string;
  url: string;
  recorder(mode: Mode): Recorder;
  /** Every byte written under the directory (database, WAL, journal, miss log). */
  bytes(): Promise<Buffer>;
  cleanup(): Promise<void>;
}> {
  const dir = tempDir("adapters");
  const url = `sqlite://${join(dir, "cache.sqlite")}`;
  const open: Recorder[] = [];
  return {
    dir,
    url,
    recorder(mode) {
      const r = createRecorder({ store: url, mode, env: {} });
      open.push(r);
      return r;
    },
    async bytes() {
      for (const r of open.splice(0)) await r.close();
      // Every file, the miss log's folder included (a replay miss is logged beside the store).
      const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((f) =>
        f.isFile(),
      );
      return Buffer.concat(
        await Promise.all(files.map((f) => readFile(join(f.parentPath, f.name)))),
      );
    },
    async cleanup() {
      for (const r of open.splice(0)) await r.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Every stored entry's response, from any store, by listing it. */
export async function storedResponses(recorder: Recorder): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const [, value] of recorder.store.list(entryPrefix(recorder.namespace))) {
    out.push((value as { response: unknown }).response);
  }
  return out;
}

/** Drain an async iterable. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
