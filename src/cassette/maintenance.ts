/**
 * Whole-file operations behind `invocache redact` and `invocache prune`:
 * read a cassette under its lock, change it, write it back atomically. Like
 * the store, they refuse to touch a cassette they cannot parse.
 */
import { CassetteError, SecretLeakError } from "../errors.js";
import type { JsonValue } from "../json/index.js";
import { createSecretScanner, type SecretFinding, type SecretOptions } from "../secrets/index.js";
import { parseCassetteFile } from "./append.js";
import { emitCassette } from "./emit.js";
import { readWithStamp, writeFileAtomic } from "./files.js";
import { type CassetteItem, isEntryKey } from "./item.js";
import { type LockOptions, withFileLock } from "./lock.js";
import type { CassetteSource } from "./parse.js";
import { cassetteSource } from "./source.js";

async function load(src: CassetteSource): Promise<CassetteItem[] | undefined> {
  const read = await readWithStamp(src.file);
  if (read === undefined) return undefined;
  return parseCassetteFile(read.bytes, src);
}

/**
 * The checked items of a cassette, in file order (entries, then values).
 *
 * @throws CassetteError when the file is missing or malformed.
 * @example
 * for (const { key, value } of await readCassette("cassettes/a.yaml")) console.log(key);
 */
export async function readCassette(path: string): Promise<CassetteItem[]> {
  const src = cassetteSource(path);
  const items = await load(src);
  if (items === undefined) {
    throw new CassetteError(src.file, "load", `${src.display}: no such cassette.`, {
      url: src.url,
    });
  }
  return items;
}

/** What {@link redactCassette} did. */
export interface RedactReport {
  /** Every secret found, with the store key of the item that held it. */
  found: Array<SecretFinding & { key: string }>;
  /** Whether the file was rewritten (false when it was clean, or in a dry run). */
  written: boolean;
}

/**
 * Scrub an existing cassette: replace every secret (env values in all their
 * spellings, known key shapes) by `{secret:NAME}` placeholders and rewrite
 * the file atomically. A missing file is clean.
 *
 * @throws CassetteError for a malformed cassette (left untouched);
 * SecretLeakError when a secret sits in a store key, which cannot be redacted.
 * @example
 * const { found } = await redactCassette("cassettes/planner.yaml");
 * for (const f of found) console.log(`${f.name} in ${f.key} at ${f.path}`);
 */
export async function redactCassette(
  path: string,
  options: SecretOptions & { dryRun?: boolean } & LockOptions = {},
): Promise<RedactReport> {
  const src = cassetteSource(path);
  return withFileLock(
    src.file,
    async () => {
      const items = await load(src);
      if (items === undefined) return { found: [], written: false };
      const scanner = createSecretScanner(options);
      const found: RedactReport["found"] = [];
      let changed = false;
      const out = items.map((item) => {
        const keyFindings: SecretFinding[] = [];
        scanner.redactString(item.key, "key", keyFindings);
        if (keyFindings.length > 0) {
          throw new SecretLeakError(
            src.display,
            keyFindings,
            `invocache: ${src.display} has a secret (${keyFindings[0]!.name}) in the store key of an item; keys cannot be redacted. Delete that item by hand.`,
          );
        }
        const r = scanner.redact(item.value);
        for (const f of r.found) found.push({ ...f, key: item.key });
        if (r.value === item.value) return item;
        changed = true;
        return { ...item, value: r.value };
      });
      if (!changed || options.dryRun === true) return { found, written: false };
      await writeFileAtomic(src.file, emitCassette(out));
      return { found, written: true };
    },
    options,
  );
}

/** What {@link pruneCassette} did. */
export interface PruneReport {
  /** Entry keys removed. */
  removed: string[];
  /** Entry keys kept. */
  kept: string[];
}

/**
 * Drop the entries of a cassette that are not to be kept (e.g. the unused
 * ones reported by a test run), rewriting it atomically. Non-entry values
 * (run records) are kept. A missing file has nothing to prune.
 *
 * @param keep entry keys to keep, or a predicate on the entry key and its
 *   value as the file holds it now, under the lock (so a caller can keep an
 *   entry re-recorded since it last read the file).
 * @example
 * const usage = await store.usage();
 * await pruneCassette("cassettes/planner.yaml", usage.used);
 */
export async function pruneCassette(
  path: string,
  keep: Iterable<string> | ((key: string, value: JsonValue) => boolean),
  options: LockOptions = {},
): Promise<PruneReport> {
  const src = cassetteSource(path);
  const keeps =
    typeof keep === "function"
      ? keep
      : (
          (set) => (k: string) =>
            set.has(k)
        )(new Set(keep));
  return withFileLock(
    src.file,
    async () => {
      const items = await load(src);
      if (items === undefined) return { removed: [], kept: [] };
      const removed: string[] = [];
      const kept: string[] = [];
      const out = items.filter((item) => {
        if (!isEntryKey(item.key)) return true;
        const keeping = keeps(item.key, item.value);
        (keeping ? kept : removed).push(item.key);
        return keeping;
      });
      if (removed.length > 0) await writeFileAtomic(src.file, emitCassette(out));
      return { removed, kept };
    },
    options,
  );
}
