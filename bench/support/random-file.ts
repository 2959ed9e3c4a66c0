/**
 * A large file of deterministic pseudo-random bytes (xorshift32), written in
 * 1 MiB chunks, for hashing benches: incompressible, identical on every run.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CHUNK = 1 << 20;

export interface TempFile {
  path: string;
  bytes: number;
  /** Remove the file and its directory. */
  remove(): void;
}

/** Create `mib` MiB of pseudo-random content in a fresh directory under os.tmpdir(). */
export function createRandomFile(mib: number, seed = 0x9e3779b9): TempFile {
  const dir = mkdtempSync(join(tmpdir(), "invocache-bench-"));
  const path = join(dir, "artifact.bin");
  const words = new Uint32Array(CHUNK / 4);
  let x = seed >>> 0 || 1;
  const fd = openSync(path, "w");
  try {
    for (let c = 0; c < mib; c++) {
      for (let i = 0; i < words.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i] = x >>> 0;
      }
      writeSync(fd, words);
    }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  } finally {
    closeSync(fd);
  }
  return {
    path,
    bytes: mib * CHUNK,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
