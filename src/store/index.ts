// The store toolkit (`invocache/store`): the Store contract, opening stores
// by URL, and the entry/key schema every store holds. Re-exports only.

export { valueDigest } from "./digest.js";
export {
  ENTRY_VERSION,
  type Entry,
  type EntryMeta,
  type EntryVerdict,
  entryKey,
  entryLeaseKey,
  entryPrefix,
  isEntryKey,
  parseEntryKey,
  parseRunKey,
  runKey,
  validateEntry,
} from "./envelope.js";
export { MAX_KEY_LENGTH } from "./keys.js";
export {
  type MetaQuery,
  metaFromValues,
  type StoredMeta,
  storedMetaOf,
} from "./meta.js";
export {
  durationUs,
  foldMetaStats,
  metaStatsOf,
  statsKeyId,
  summedUsage,
} from "./meta-stats.js";
export type {
  MetaStats,
  MetaStatsGroup,
  MetaStatsKey,
  MetaStatsQuery,
  MetaStatsTokens,
  MetaStatsUsage,
} from "./meta-types.js";
export { type OpenStoreOptions, openStore, type SqliteDriver } from "./open.js";
export type { StorePolicy } from "./policy.js";
export { isSortRefused, SORT_REFUSED } from "./sort-refused.js";
export { type OnStale, parseMaxAge } from "./staleness.js";
export { STORE_TIMEOUT_MS } from "./timeout.js";
export type { GetOptions, JsonValue, SetOptions, Store } from "./types.js";
export {
  DEFAULT_SQLITE_PATH,
  defaultStoreUrl,
  parseStoreUrl,
  redactUrl,
  STORE_SCHEMES,
} from "./url.js";
export { type Usage, type UsageShape, usageProblem } from "./usage-format.js";
