/**
 * The storage contract. Deliberately tiny (keyv's habit): a store keeps JSON
 * values under string keys, can list keys by prefix, and can hand out
 * expiring leases for cross-process single-flight. All replay policy lives in
 * the recorder; a store never interprets what it keeps beyond that.
 */

import type { JsonValue } from "../json/index.js";
import type { MetaQuery, MetaStats, MetaStatsQuery, StoredMeta } from "./meta-types.js";
import type { StorePolicy } from "./policy.js";

/** Compatibility: the JSON value type lives in src/json. */
export type { JsonValue };

/** Options for {@link Store.get}. */
export interface GetOptions {
  /**
   * What the caller knows the entry under `key` must hold: the identity the
   * key names and the manifest it was computed from (the recorder passes
   * both). A store that owes an integrity check of a stored entry (the
   * cassette checks that an entry's manifest hashes to its id the first
   * time it serves it) may pass it by finding the stored id and manifest
   * equal to these, instead of hashing the stored manifest again: equal
   * JSON has equal canonical bytes, so the same identity. Such a pass is not
   * remembered, so a wrong hint cannot clear the check for anyone else
   * (only a hint made by invocache's own recorder, which computed the id
   * from that manifest itself, is: it is a proof).
   * Other stores ignore it.
   */
  expect?: { id: string; manifest: JsonValue };
}

/** Options for {@link Store.set}. */
export interface SetOptions {
  /** Expire the value after this many milliseconds (omit: keep forever). */
  ttlMs?: number;
  /**
   * The value replaces a recording the recorder found out of date (its
   * `maxAge`, `onStale: "rerecord"`): a backend that keeps the old bytes of
   * an equal re-record (the cassette) writes this one, so its age starts over.
   * Other backends always write the value and may ignore it.
   */
  refresh?: boolean;
}

/**
 * A key/value store for recorded invocations.
 *
 * Errors: every method rejects with a `StoreError` when the backend fails.
 * A backend failure is never turned into `undefined` (a false miss).
 * Bad arguments reject with `TypeError`/`RangeError` naming the argument.
 *
 * Keys (and lease owners, and `list` prefixes unless empty) are 1-512 UTF-16
 * code units of well-formed Unicode without U+0000, on every store: backends
 * keep keys as UTF-8, where a lone surrogate would become U+FFFD and merge
 * two keys. Values are any JSON value and round trip exactly, lone
 * surrogates included; every read returns a fresh copy.
 *
 * @example
 * const store = openStore("sqlite://.invocache/cache.sqlite");
 * await store.set("k", { a: 1 });
 * await store.get("k"); // { a: 1 }
 * await store.close();
 */
export interface Store {
  /** Where the data lives, for messages (`sqlite:///abs/path`, `redis://host:port`). Never contains a password. */
  readonly url: string;
  /**
   * Replay defaults for the recorder that uses this store (a cassette's
   * `maxAge`, `onStale`, secret options). The store never applies them; the
   * recorder does, for each of its own options left unset.
   */
  readonly policy?: StorePolicy;
  /** The value under `key`, or `undefined` when absent or expired. */
  get(key: string, options?: GetOptions): Promise<JsonValue | undefined>;
  /**
   * Optional (every store `openStore` and `cassetteStore` open has it):
   * what `get` returns, except that when the value is an object with a
   * `manifest` member, that member is left out, and the store avoids
   * reading, parsing or copying it where it can. What a replay hit reads:
   * an entry's id, response and meta, not the request it was recorded for
   * (on an agent loop the manifest holds the whole conversation, ~80 times
   * the response). `options` as for `get` (a cassette still settles an
   * entry's owed id check). A fresh copy, as `get`'s.
   */
  getHit?(key: string, options?: GetOptions): Promise<JsonValue | undefined>;
  /** Store `value` under `key`, replacing any previous value. */
  set(key: string, value: JsonValue, options?: SetOptions): Promise<void>;
  /** Remove `key`; resolves `true` when something was removed. */
  delete(key: string): Promise<boolean>;
  /**
   * Optional (every store `openStore` and `cassetteStore` open has it):
   * remove `key` only if its value is still the one the caller read,
   * `digest` being that value's `valueDigest`. Resolves `true` when removed,
   * `false` when absent, expired, or replaced meanwhile (a re-record since
   * the read is kept, never lost). Atomic against writers in other
   * processes: the store compares and deletes in one step (one SQL
   * statement on the stored text, a Lua script on Redis, under the file
   * lock on a cassette). What `invocache prune` deletes with.
   *
   * @throws TypeError naming `digest` when it is not 64 lowercase hex.
   */
  deleteIfUnchanged?(key: string, digest: string): Promise<boolean>;
  /** Every live `[key, value]` whose key starts with `prefix`, in no promised order (but see `listsInKeyOrder`). */
  list(prefix: string): AsyncIterable<[string, JsonValue]>;
  /**
   * Optional: true when `list` yields keys in a lexicographic order (SQLite
   * pages through its primary key in code-unit order, Postgres with
   * `COLLATE "C"`, in UTF-8 byte order), so keys that share a prefix come
   * one after another. A fold
   * over the entries (`invocache stats`) then counts distinct ids by
   * comparing each key with the one before, in memory that does not grow
   * with the store.
   */
  readonly listsInKeyOrder?: boolean;
  /**
   * Optional, on stores that can sort inside their database (the embedded
   * SQLite store opened read-only, PostgreSQL): `list`, ordered by each entry's
   * `meta.recordedAt`, then key (binary), in memory that does not grow with
   * the store. Values that are not entries come first. Absent where the
   * backend cannot sort.
   */
  readonly listByRecordedAt?: (prefix: string) => AsyncIterable<[string, JsonValue]>;
  /**
   * Optional: the stored metadata (kind, namespace, role, model, recorded
   * time, size…, see `StoredMeta`) of every live value matching `query`,
   * in its order, without reading the values: what `invocache ls`, `stats`,
   * `prune` and the viewer answer from. SQLite and PostgreSQL keep it in
   * columns and Redis in a hash beside each value, written in the same
   * statement or script as the value; memory and cassette stores compute it
   * from what they hold.
   *
   * @throws MetadataMissingError (before the first row) when some value has
   *   no stored metadata: the store predates it or an older invocache wrote
   *   to it; `migrateMeta` (`invocache migrate-store`) fixes that.
   */
  listMeta?(query?: MetaQuery): AsyncIterable<StoredMeta>;
  /**
   * Optional: the stored metadata of every live value matching `query`,
   * summed (what `invocache stats` prints): SQLite and PostgreSQL sum it
   * with SQL, Redis with a script, a page of rows at a time, so a million
   * rows never cross to the caller. Equal, to the digit, to `foldMetaStats`
   * of `listMeta` (which `metaStatsOf` falls back to where this is absent).
   *
   * `onProgress` is called with how many rows were summed so far, after
   * each page.
   *
   * @throws MetadataMissingError as `listMeta`.
   */
  statsMeta?(query?: MetaStatsQuery, onProgress?: (rows: number) => void): Promise<MetaStats>;
  /**
   * Optional, on the stores that keep metadata: give every value that lacks
   * it its metadata (adding columns and indexes where needed), a batch at a
   * time, safe while other processes use the store. Resolves how many values
   * it filled. Never run implicitly: `invocache migrate-store` runs it.
   */
  migrateMeta?(onProgress?: (done: number) => void): Promise<number>;
  /**
   * Try to take the lease `key` for `owner` for `ttlMs` milliseconds. Resolves
   * `true` when taken (absent, expired, or already held by `owner`: renewed),
   * `false` when someone else holds a live lease. Atomic across processes
   * sharing the backend.
   */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Release the lease if `owner` still holds it; otherwise do nothing. */
  releaseLease(key: string, owner: string): Promise<void>;
  /** Flush and release resources. Further calls reject. Idempotent. */
  close(): Promise<void>;
}
