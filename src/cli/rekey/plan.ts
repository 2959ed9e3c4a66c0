/**
 * The plan of a re-key, decided before anything is written: for each
 * entry `--where` picks, its manifest with the declared changes, its new
 * identity (identity's `manifestIdentity`, the function
 * `invocationIdentity` ends in) and its new key; the conflicts (two entries
 * that would share one key) and, under `--prefer`, which one is kept. Pure:
 * reading and writing are the caller's.
 */
import { manifestIdentity } from "../../identity/index.js";
import { type JsonValue, jsonEqual } from "../../json/index.js";
import { type Entry, entryKey, validateEntry, valueDigest } from "../../store/index.js";
import { CliError } from "../errors.js";
import type { EntryRecord } from "../source.js";
import type { Renormalized } from "./table-history.js";

/** One entry that moves to a new identity. */
export interface Move {
  from: EntryRecord;
  /** `valueDigest` of the value read: the old key is deleted only if it still holds it. */
  digest: string;
  toId: string;
  toKey: string;
  /** The entry as it is written under `toKey`. */
  value: Entry;
}

/** Two or more entries that would end up under one key. */
export interface Conflict {
  key: string;
  cassette?: string;
  /** The old keys of the entries that would meet there (an entry already there and staying: its own key). */
  keys: string[];
  /** Under `--prefer`: the old key of the entry kept. */
  kept?: string;
}

/** What a re-key will do. */
export interface RekeyPlan {
  /** Entries `--where` picked. */
  matched: number;
  /** Picked entries whose manifest the changes leave as it was (or whose identity stays). */
  unchanged: number;
  /** Entries written under a new key (and removed from their old one). */
  moves: Move[];
  /**
   * Picked entries that need no write of their own: an equal entry is
   * already under their new key (a re-key run again after a crash between
   * its writes and its deletes), or `--prefer` chose another entry for that
   * key. Their old key is deleted.
   */
  retired: Move[];
  /** Entries that stay under their key but are overwritten: `--prefer` chose a moved entry over them. */
  replaced: EntryRecord[];
  conflicts: Conflict[];
  /** Under `--renormalize`: picked entries that would need their raw prompt (left as they are). */
  reRecord: Array<{ key: string; cassette?: string; why: string }>;
  /** Under `--renormalize`: entries whose `meta.normalization` moves to the current table. */
  renormalized: number;
  /** Entries that stay under their key, rewritten because their `meta.parent` moved. */
  relinked: number;
}

/** What `--prefer` keeps of entries that meet under one key. */
export type Prefer = "newest" | "oldest";

/**
 * Plan the re-key of `records` (everything the source holds: entries that
 * stay matter, they may be in the way).
 *
 * @throws CliError (exit 1) when a changed manifest is not a valid one,
 *   naming the entry and the field.
 */
export function planRekey(
  records: readonly EntryRecord[],
  picked: (r: EntryRecord) => boolean,
  change: (manifest: JsonValue) => JsonValue,
  prefer: Prefer | undefined,
  renormalizeEntry?: (r: EntryRecord) => Renormalized,
): RekeyPlan {
  const plan: RekeyPlan = {
    matched: 0,
    unchanged: 0,
    moves: [],
    retired: [],
    replaced: [],
    conflicts: [],
    reRecord: [],
    renormalized: 0,
    relinked: 0,
  };
  const place = (cassette: string | undefined, key: string) => `${cassette ?? ""}\0${key}`;
  const moving: Move[] = [];
  for (const r of records) {
    if (!picked(r)) continue;
    plan.matched++;
    let meta = r.entry.meta;
    const table = renormalizeEntry?.(r);
    if (table?.kind === "re-record") {
      plan.reRecord.push({
        key: r.key,
        ...(r.cassette === undefined ? {} : { cassette: r.cassette }),
        why: table.why,
      });
      continue;
    }
    if (table?.kind === "holds") {
      meta = { ...meta, normalization: table.normalization };
      plan.renormalized++;
    }
    // A Manifest is JSON, but an interface type: widened for the changes, which work on JSON.
    const before = r.entry.manifest as unknown as JsonValue;
    const manifest = change(before);
    const toId = manifest === before ? r.id : manifestIdentity(manifest as never);
    if (toId === r.id && meta === r.entry.meta) {
      plan.unchanged++;
      continue;
    }
    // JSON parts put together; validateEntry below says whether it is still an entry.
    const candidate = { ...r.entry, id: toId, manifest, meta } as unknown as JsonValue;
    let value: Entry;
    try {
      value = validateEntry(candidate, `${r.key} after the changes`);
    } catch (error) {
      throw new CliError("ERR_REKEY_MANIFEST", (error as Error).message.split(". Delete")[0]!, {
        data: { key: r.key },
      });
    }
    const toKey = entryKey(r.namespace, toId, r.occurrence);
    moving.push({ from: r, digest: valueDigest(r.value), toId, toKey, value });
  }
  // Lineage follows: a retry's parent that moved is named by its new id.
  const renamed = new Map<string, string>();
  for (const m of moving) renamed.set(m.from.id, m.toId);
  for (const m of moving) {
    const parent = m.value.meta.parent;
    const to = parent === undefined ? undefined : renamed.get(parent);
    if (to !== undefined) m.value = { ...m.value, meta: { ...m.value.meta, parent: to } };
  }
  // An entry that stays (not picked, or unchanged) whose parent moved is
  // rewritten in place, so the retry still names its parent.
  const moved = new Set(moving.map((m) => place(m.from.cassette, m.from.key)));
  for (const r of records) {
    const parent = r.entry.meta.parent;
    const to = parent === undefined ? undefined : renamed.get(parent);
    if (to === undefined || moved.has(place(r.cassette, r.key))) continue;
    const value = { ...r.entry, meta: { ...r.entry.meta, parent: to } };
    moving.push({ from: r, digest: valueDigest(r.value), toId: r.id, toKey: r.key, value });
    plan.relinked++;
  }
  const leaving = new Set(moving.map((m) => place(m.from.cassette, m.from.key)));
  const staying = new Map<string, EntryRecord>();
  for (const r of records) {
    const at = place(r.cassette, r.key);
    if (!leaving.has(at)) staying.set(at, r);
  }
  const byTarget = new Map<string, Move[]>();
  for (const m of moving) {
    const at = place(m.from.cassette, m.toKey);
    const list = byTarget.get(at);
    if (list === undefined) byTarget.set(at, [m]);
    else list.push(m);
  }
  for (const [at, movers] of byTarget) {
    const occupant = staying.get(at);
    // An entry equal to what is already there (or to another mover) is no conflict: one copy is kept.
    const distinct: Move[] = [];
    for (const m of movers) {
      // Entries are JSON (validated above): widened for jsonEqual.
      const same =
        // cast: an Entry is an interface (no index signature) of JSON data (validated above): jsonEqual compares it as JSON.
        (occupant !== undefined && jsonEqual(occupant.value, m.value as unknown as JsonValue)) ||
        distinct.some((d) =>
          jsonEqual(d.value as unknown as JsonValue, m.value as unknown as JsonValue),
        );
      if (same) plan.retired.push(m);
      else distinct.push(m);
    }
    const count = distinct.length + (occupant === undefined ? 0 : 1);
    if (count <= 1) {
      plan.moves.push(...distinct);
      continue;
    }
    const first = distinct[0]!;
    const conflict: Conflict = {
      key: first.toKey,
      ...(first.from.cassette === undefined ? {} : { cassette: first.from.cassette }),
      keys: [...(occupant === undefined ? [] : [occupant.key]), ...distinct.map((m) => m.from.key)],
    };
    plan.conflicts.push(conflict);
    if (prefer === undefined) continue;
    type Contender = { key: string; recordedAt: string; move?: Move; stays?: EntryRecord };
    const contenders: Contender[] = distinct.map((m) => ({
      key: m.from.key,
      recordedAt: m.value.meta.recordedAt,
      move: m,
    }));
    if (occupant !== undefined) {
      contenders.push({
        key: occupant.key,
        recordedAt: occupant.entry.meta.recordedAt,
        stays: occupant,
      });
    }
    const time = (c: Contender) => Date.parse(c.recordedAt);
    contenders.sort((a, b) => time(a) - time(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const winner = prefer === "oldest" ? contenders[0]! : contenders[contenders.length - 1]!;
    conflict.kept = winner.key;
    for (const c of contenders) {
      if (c === winner) continue;
      if (c.move !== undefined) plan.retired.push(c.move);
    }
    if (winner.move !== undefined) {
      plan.moves.push(winner.move);
      if (occupant !== undefined) plan.replaced.push(occupant);
    }
  }
  return plan;
}

/**
 * The error of conflicts without `--prefer`: each names both (or all) entries.
 */
export function conflictError(conflicts: readonly Conflict[]): CliError {
  const lines = conflicts.map(
    (c) =>
      `${c.cassette === undefined ? "" : `${c.cassette}: `}${c.keys.join(" and ")} would both be ${c.key}`,
  );
  return new CliError(
    "ERR_REKEY_CONFLICT",
    `rekey: ${conflicts.length} ${conflicts.length === 1 ? "key" : "keys"} would hold two different entries; nothing was changed. Say which to keep with --prefer newest or --prefer oldest (by recording time), or narrow the entries with --where`,
    { details: lines, data: { conflicts } },
  );
}
