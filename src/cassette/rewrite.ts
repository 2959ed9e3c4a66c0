/**
 * Many changes to one cassette as one atomic write: read the file under its
 * lock, hand its items to a function that returns the new list (or
 * `undefined`: leave the file alone), write that back atomically. What
 * `invocache rekey` moves entries with: a reader sees every entry under its
 * old key or every entry under its new one, never half of them. Like the
 * other whole-file operations it refuses a cassette it cannot parse.
 */
import { CassetteError } from "../errors.js";
import { parseCassetteFile } from "./append.js";
import { emitCassette } from "./emit.js";
import { readWithStamp, writeFileAtomic } from "./files.js";
import type { CassetteItem } from "./item.js";
import { type LockOptions, withFileLock } from "./lock.js";
import { cassetteSource } from "./source.js";

/**
 * Rewrite the cassette at `path` with `change(items)`, under its lock.
 * `change` sees the file as it is now (re-read under the lock, so a writer
 * that changed it since the caller last read it is not overwritten blind)
 * and may throw to abort: nothing is written then.
 *
 * @returns whether the file was written.
 * @throws CassetteError when the file is missing or malformed (left untouched).
 * @example
 * await rewriteCassette("cassettes/a.yaml", (items) => items.filter((i) => i.key !== key));
 */
export async function rewriteCassette(
  path: string,
  change: (items: readonly CassetteItem[]) => CassetteItem[] | undefined,
  options: LockOptions = {},
): Promise<boolean> {
  const src = cassetteSource(path);
  return withFileLock(
    src.file,
    async () => {
      const read = await readWithStamp(src.file);
      if (read === undefined) {
        throw new CassetteError(src.file, "load", `${src.display}: no such cassette.`, {
          url: src.url,
        });
      }
      const items = parseCassetteFile(read.bytes, src);
      const out = change(items);
      if (out === undefined) return false;
      await writeFileAtomic(src.file, emitCassette(out));
      return true;
    },
    options,
  );
}
