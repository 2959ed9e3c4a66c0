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

/** Options of `Store.statsMeta`. */
export interface MetaStatsQuery {
  /** Only keys starting with this (literally). Default: every key. */
  prefix?: string;
  /**
   * Model names: the entries with usage whose model or response model
   * (`usage.model`) is one of them are also counted by their exact token
   * counts, in `MetaStats.usages`. For prices that are not linear in the
   * tokens (a tier past a prompt size), which the caller prices entry by entry.
   */
  usageDetail?: readonly string[];
  /**
   * Also count by exact token counts the entries whose input tokens exceed
   * this (a price tier past a prompt size applies to them). Entries whose
   * cache counts exceed their input tokens are always counted so (a price
   * table may refuse them one by one). Default: none by size.
   */
  usageDetailAbove?: number;
}

/**
 * What entries are grouped by in `MetaStats`: everything a caller labels or
 * prices them by, but their token counts.
 */
export interface MetaStatsKey {
  /** The entries' namespace. */
  namespace: string;
  /** The entries' role (their manifest's). */
  role: string;
  /** The model of a model call; absent for a tool call. */
  model?: string;
  /** A tool call's tool (as `StoredMeta.tool`). */
  tool?: { server?: string; name: string; version: number };
  /** The model the stored usage names (`usage.model`), when it names one. */
  usageModel?: string;
  /**
   * `"none"`: no stored usage; `"ok"`; `"over"`: cache counts past the input
   * tokens (a price table refuses such a call: it is priced entry by entry too).
   */
  usage: "none" | "ok" | "over";
}

/** The token counts of stored usage, summed. */
export interface MetaStatsTokens {
  /** Input tokens, cached ones included (as `Usage.inputTokens`). */
  inputTokens: number;
  /** Output tokens. */
  outputTokens: number;
  /** Input tokens read from the prompt cache (0 where the usage has none). */
  cacheReadTokens: number;
  /** Input tokens written to the prompt cache (0 where the usage has none). */
  cacheWriteTokens: number;
}

/**
 * The sums of one group of live entries. Integers only (durations in µs,
 * each entry's `durationMs` rounded half up to the µs first), so every
 * backend sums them to the digit.
 */
export interface MetaStatsGroup extends MetaStatsKey, MetaStatsTokens {
  /** Live entries in the group. */
  entries: number;
  /** UTF-8 bytes of their values' JSON (`StoredMeta.bytes`). */
  bytes: number;
  /** Their recorded call durations, in whole µs (each `durationMs` rounded half up). */
  durationUs: number;
  /** Entries with an accepted verdict. */
  accepted: number;
  /** Entries with a rejected verdict. */
  rejected: number;
}

/**
 * How many entries of one group had exactly these token counts
 * (`MetaStatsQuery.usageDetail`, `usageDetailAbove`, and cache counts past the input).
 */
export interface MetaStatsUsage extends MetaStatsKey, MetaStatsTokens {
  /** How many entries of the group had exactly these counts. */
  entries: number;
}

/**
 * What `Store.statsMeta` answers: the live values' stored metadata summed,
 * without reading them one by one where the backend can sum them itself.
 */
export interface MetaStats {
  /** Entries by group, in the order of their keys' JSON (the same on every store). */
  groups: MetaStatsGroup[];
  /** The exact token counts asked for (`usageDetail`), in the same order. */
  usages: MetaStatsUsage[];
  /** Distinct ids, counted per namespace. */
  ids: number;
  /** Run records. */
  runs: number;
  /** Values under entry keys that are not entries; the first of them in key order. */
  problems: number;
  /** The first problem in key order, and why its value is not an entry. */
  firstProblem?: { key: string; problem: string };
  /** The earliest `recordedAt` of an entry (ISO text, compared as text). */
  oldest?: string;
  /** The latest `recordedAt` of an entry. */
  newest?: string;
}
