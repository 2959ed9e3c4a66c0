/**
 * Writing a re-key plan. Nothing a user recorded may be lost half-way:
 *
 * - A cassette file is rewritten once, under its lock, atomically
 *   (`rewriteCassette`): a reader sees every entry under its old key or every
 *   one under its new key. If an entry changed since it was read (another
 *   process re-recorded it), that file is left alone and the command fails.
 * - A store has no transaction across keys in the `Store` contract, so the
 *   order is what makes it crash-safe: first every new key is written, then
 *   every old key deleted, each only if it still holds the value read
 *   (`deleteIfUnchanged`: a re-record meanwhile is kept). A crash between
 *   the two leaves both copies, each a valid entry; running the same rekey
 *   again finds the new copy equal to what it would write, writes nothing
 *   and deletes the old keys. No point in between has an entry under
 *   neither key.
 */
import { join } from "node:path";
import { type CassetteItem, rewriteCassette } from "../../cassette/index.js";
import type { JsonValue } from "../../json/index.js";
import { type Store, valueDigest } from "../../store/index.js";
import { CliError, isStoreError, storeFailure } from "../errors.js";
import type { Move, RekeyPlan } from "./plan.js";

/** What was written. */
export interface RekeyWrites {
  /** New keys written. */
  written: string[];
  /** Old keys deleted. */
  deleted: string[];
  /** Old keys kept because their value changed since it was read (re-recorded meanwhile). */
  changedMeanwhile: string[];
}

/**
 * Write `plan` into `store`: new keys first, in an order where a key that
 * another moved entry leaves is overwritten only after that entry's new
 * copy is written; then the old keys.
 */
export async function applyToStore(
  store: Store,
  url: string,
  plan: RekeyPlan,
): Promise<RekeyWrites> {
  const out: RekeyWrites = { written: [], deleted: [], changedMeanwhile: [] };
  const pending = [...plan.moves];
  const targets = new Set(plan.moves.map((m) => m.toKey));
  try {
    while (pending.length > 0) {
      const leaving = new Set(pending.map((m) => m.from.key));
      let ready = pending.filter((m) => !leaving.has(m.toKey) || m.toKey === m.from.key);
      // A cycle (entries trading keys): nothing is free; write them in turn.
      // Only here can a crash between two writes lose the entry overwritten
      // first; a cycle needs changes that turn two manifests into each other.
      if (ready.length === 0) ready = pending.slice();
      for (const m of ready) {
        // An Entry is JSON (validateEntry made it in the plan): the store takes the wider JsonValue.
        await store.set(m.toKey, m.value as unknown as JsonValue);
        out.written.push(m.toKey);
        pending.splice(pending.indexOf(m), 1);
      }
    }
  } catch (error) {
    if (!isStoreError(error)) throw error;
    throw storeFailure(
      error,
      `write the re-keyed entries (${out.written.length} written, no old key deleted yet: run the same rekey again to finish)`,
      url,
    );
  }
  const deleteIfUnchanged = store.deleteIfUnchanged?.bind(store);
  if (deleteIfUnchanged === undefined) {
    throw new CliError(
      "ERR_STORE",
      `${url} cannot delete an entry only if it is unchanged; the new keys are written, the old ones kept`,
    );
  }
  try {
    for (const m of [...plan.moves, ...plan.retired]) {
      // A key another entry moved into holds that entry now: not this one's to delete.
      if (targets.has(m.from.key)) continue;
      if (await deleteIfUnchanged(m.from.key, m.digest)) out.deleted.push(m.from.key);
      else out.changedMeanwhile.push(m.from.key);
    }
  } catch (error) {
    if (!isStoreError(error)) throw error;
    throw storeFailure(
      error,
      `delete the old keys (every new key is written, ${out.deleted.length} old ones deleted: run the same rekey again to finish)`,
      url,
    );
  }
  return out;
}

/**
 * Write `plan` into a cassette file, or a folder of them (`folder` true:
 * each entry's `cassette` is its file under `path`): one atomic rewrite per file.
 */
export async function applyToCassettes(
  path: string,
  folder: boolean,
  plan: RekeyPlan,
): Promise<RekeyWrites> {
  const out: RekeyWrites = { written: [], deleted: [], changedMeanwhile: [] };
  const byFile = new Map<string, { moves: Move[]; retired: Move[] }>();
  const group = (m: Move) => {
    const file = folder && m.from.cassette !== undefined ? join(path, m.from.cassette) : path;
    const g = byFile.get(file) ?? { moves: [], retired: [] };
    byFile.set(file, g);
    return g;
  };
  for (const m of plan.moves) group(m).moves.push(m);
  for (const m of plan.retired) group(m).retired.push(m);
  for (const [file, { moves, retired }] of byFile) {
    await rewriteCassette(file, (items) => {
      const held = new Map(items.map((i) => [i.key, i]));
      for (const m of [...moves, ...retired]) {
        const now = held.get(m.from.key);
        if (now === undefined || valueDigest(now.value) !== m.digest) {
          throw new CliError(
            "ERR_REKEY_CHANGED",
            `rekey: ${m.from.key} in ${file} changed since it was read (recorded again meanwhile); that file was left as it was. Run rekey again.`,
          );
        }
      }
      const targets = new Map(moves.map((m) => [m.toKey, m]));
      const leaving = new Set([...moves, ...retired].map((m) => m.from.key));
      const result: CassetteItem[] = [];
      for (const item of items) {
        const into = targets.get(item.key);
        if (into !== undefined) continue; // written below, in place of what was there
        if (leaving.has(item.key)) continue;
        result.push(item);
      }
      for (const m of moves) {
        const was = held.get(m.from.key);
        result.push({
          key: m.toKey,
          value: m.value as unknown as JsonValue, // an Entry is JSON (validated in the plan)
          ...(was?.expires === undefined ? {} : { expires: was.expires }),
        });
      }
      return result;
    });
    for (const m of moves) out.written.push(m.toKey);
    const targets = new Set(moves.map((m) => m.toKey));
    for (const m of [...moves, ...retired])
      if (!targets.has(m.from.key)) out.deleted.push(m.from.key);
  }
  return out;
}
