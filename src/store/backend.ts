/**
 * What a keyv-backed store needs from one backend (memory, SQLite, Redis,
 * Postgres). Values go through keyv (serialization, ttl); listing and leases
 * need queries keyv does not offer, so each backend implements them on its
 * own client. Everything else (argument checks, error wrapping, closing,
 * lazy loading) lives once, in `KeyvStore`.
 */
import type { Keyv } from "keyv";
import type { MetaQuery, StoredMeta } from "./meta.js";
import type { MetaStats, MetaStatsQuery } from "./meta-types.js";

/** One raw row: the logical key and keyv's serialized record text. */
export type RawRow = [key: string, record: string];

export interface Backend {
  /** Keyv over the value table, created with `throwOnErrors: true`. */
  readonly keyv: Keyv;
  /** Prepended to every logical key before it reaches keyv (Redis shares one keyspace). */
  readonly keyPrefix: string;
  /** Called before every operation, e.g. to reconnect after a dropped connection. */
  ready?(): Promise<void>;
  /**
   * True when `ready` only checks (it changes nothing the operation needs):
   * a read may then run beside it instead of after it, and fails if it fails.
   */
  readonly readyOnlyChecks?: boolean;
  /** Called after every write: rejects when the write did not reach durable storage after all. */
  verify?(): Promise<void>;
  /** Every stored row whose logical key starts with `prefix` (literally), expired ones included. */
  listRaw(prefix: string): AsyncIterable<RawRow>;
  /**
   * Optional: the rows of `listRaw`, ordered by the stored entry's
   * `meta.recordedAt` then key, sorted by the database (in its own bounded
   * memory and temp files, not the caller's). A `null` is a step that made
   * progress without a row yet (a long sort stays within the per-step timeout).
   */
  listRawByRecordedAt?(prefix: string): AsyncIterable<RawRow | null>;
  /**
   * See `Store.acquireLease`; must be atomic across processes sharing the
   * backend. `notAfter` (epoch ms, this process's clock) is when the caller
   * gives up: a request that reaches the server later must change nothing
   * (the caller was already told it failed), and should reject.
   */
  acquireLease(key: string, owner: string, ttlMs: number, notAfter: number): Promise<boolean>;
  /** See `Store.releaseLease`; `notAfter` as for `acquireLease`. */
  releaseLease(key: string, owner: string, notAfter: number): Promise<void>;
  /**
   * Write keyv's serialized `record` under the (prefixed) `key`, unless the
   * request reaches the server after `notAfter` (then change nothing and
   * reject). Backends whose server may be frozen with requests queued
   * (Redis, Postgres) implement it; others are written through keyv.
   */
  setRecord?(
    key: string,
    record: string,
    ttlMs: number | undefined,
    notAfter: number,
    meta?: StoredMeta,
  ): Promise<void>;
  /**
   * Optional: true while writes keep metadata beside the value (`setRecord`
   * is then given `meta` and must write it in the same atomic step).
   */
  keepsMeta?(): boolean;
  /** Optional: why `listMeta` cannot answer (see `Store.listMeta`), or undefined when it can. */
  metaMissing?(): Promise<string | undefined>;
  /** Optional: the stored metadata matching `query`, expired rows included (`Store.listMeta`). */
  listMeta?(query: MetaQuery): AsyncIterable<StoredMeta>;
  /**
   * Optional: the stored metadata matching `query` summed where the data is
   * (`Store.statsMeta`), leaving out rows expired at `now` (epoch ms) as
   * `Store.listMeta` does.
   */
  statsMeta?(
    query: MetaStatsQuery,
    now: number,
    onProgress?: (rows: number) => void,
  ): Promise<MetaStats>;
  /** Optional: see `Store.migrateMeta`. */
  migrateMeta?(onProgress?: (done: number) => void): Promise<number>;
  /** Keyv's serialized record text stored under the (prefixed) `key` (expired or not), or undefined. */
  getRecord(key: string): Promise<string | undefined>;
  /**
   * Optional: the record text a hit reads under the (prefixed) `key`
   * (`Store.getHit`): keyv's record with the entry's manifest already cut
   * out, or the whole record (the store then cuts it), or undefined when
   * absent. Memory keeps the cut text beside each record, made once when
   * it is written; other backends are read through their keyv adapter.
   */
  getHitRecord?(key: string): Promise<string | undefined>;
  /**
   * Delete the (prefixed) `key` only while its stored text is exactly
   * `record` (as `getRecord` returned it), in one atomic step of the
   * backend (`DELETE … WHERE key = ? AND value = ?`, a Lua script): a value
   * written in between is never removed. True when removed. Fenced by
   * `notAfter` like `setRecord` where the backend fences writes.
   */
  deleteRecordIf(key: string, record: string, notAfter: number): Promise<boolean>;
  /** Delete the (prefixed) `key` unless too late, as for `setRecord`; true when removed. */
  deleteRecord?(key: string, notAfter: number): Promise<boolean>;
  /** Release connections and file handles. Called once. */
  close(): Promise<void>;
  /** Drop connections at once, without waiting for answers (after `close` timed out). */
  destroy?(): void;
}

/** Creates a backend on first use; rejects with the cause when it cannot. */
export type BackendFactory = () => Promise<Backend>;
