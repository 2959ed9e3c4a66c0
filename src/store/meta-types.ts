/**
 * The shapes of stored metadata (src/store/meta.ts), apart so that the Store
 * contract (types.ts) can name them without importing the entry schema.
 */
import type { Usage } from "./usage-format.js";

/**
 * What a store keeps beside one value. `kind`: `"entry"` a valid entry under
 * an entry key; `"problem"` an entry key whose value is not a valid entry
 * (the first line of why in `problem`); `"run"` a run record; `"other"`
 * anything else. The entry fields are present for `"entry"` only.
 */
export interface StoredMeta {
  key: string;
  kind: "entry" | "problem" | "run" | "other";
  /** UTF-8 bytes of the value's JSON (what `invocache ls` shows as size). */
  bytes: number;
  /** Epoch ms the value expires (it was written with a ttl); absent: never. */
  expires?: number;
  namespace?: string;
  id?: string;
  occurrence?: number;
  role?: string;
  /** The model of a model call; absent for a tool call (see `tool`). */
  model?: string;
  /** A tool call: `{ server?, name, version }` of its manifest. */
  tool?: { server?: string; name: string; version: number };
  task?: string;
  attempt?: number;
  recordedAt?: string;
  durationMs?: number;
  verdict?: "accepted" | "rejected";
  /** Tokens of the recording: its stored usage, or read from a response in a known shape. */
  usage?: Usage;
  /** For `"problem"`: why the value is not an entry. */
  problem?: string;
}

/** Options of `Store.listMeta`. */
export interface MetaQuery {
  /** Only keys starting with this (literally). Default: every key. */
  prefix?: string;
  /**
   * `"key"` (default): binary key order. `"recordedAt"` / `"recordedAtDesc"`:
   * by recording time, then key, in that direction: entries, and values
   * under entry keys that are not entries (`"problem"`, no recording time:
   * they sort as "", before every entry in `"recordedAt"`, after in `"recordedAtDesc"`).
   */
  order?: "key" | "recordedAt" | "recordedAtDesc";
  /** Only entries recorded strictly before this ISO time (implies entries only). */
  recordedBefore?: string;
  /** Only rows of kind `"entry"`. */
  entriesOnly?: boolean;
  /**
   * Resume after this row of an earlier page (its key, and its recordedAt in
   * the time orders): keyset paging, so rows written meanwhile do not shift pages.
   */
  after?: { key: string; recordedAt?: string };
  /** At most this many rows (default: all). */
  limit?: number;
}
