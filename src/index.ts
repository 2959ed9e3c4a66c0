// The public API. Re-exports only: see docs/ for each part.
export {
  AmbiguousIdError,
  EntryFormatError,
  InvocacheError,
  StoreError,
  UnsupportedEntryVersionError,
} from "./errors.js";
export {
  assertManifest,
  canonicalJson,
  explainIdentity,
  type FieldDiff,
  hashArtifact,
  IDENTITY_DOMAIN_V1,
  IDENTITY_VERSION,
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  type Manifest,
  type ManifestValue,
  MIN_PREFIX_LENGTH,
  manifestBytes,
  manifestIdentity,
  resolvePrefix,
  shortId,
} from "./identity/index.js";
export {
  explainNormalization,
  NORMALIZATION_RULES,
  NORMALIZATION_VERSION,
  type NormalizationReport,
  type NormalizationRule,
  type NormalizeOptions,
  normalizePrompt,
  type RuleMatch,
} from "./normalize/index.js";
export {
  type CallOptions,
  createRecorder,
  DivergenceError,
  EntryTooLargeError,
  type Listener,
  type MissDetails,
  MODES,
  type Mode,
  type NearestEntry,
  type Recorder,
  type RecorderEvents,
  type RecorderIdentityDefaults,
  type RecorderOptions,
  type RecorderStats,
  ReplayMissError,
  RUN_DOMAIN_V1,
  type RunInfo,
  resolveMode,
  runContentHash,
  type ServedCall,
  UnknownInvocationError,
} from "./recorder/index.js";
export {
  ENTRY_VERSION,
  type Entry,
  type EntryMeta,
  type EntryVerdict,
  entryKey,
  entryLeaseKey,
  entryPrefix,
  runKey,
  validateEntry,
} from "./store/envelope.js";
export { MAX_KEY_LENGTH } from "./store/keys.js";
export { openStore } from "./store/open.js";
export type { JsonValue, SetOptions, Store } from "./store/types.js";
export { defaultStoreUrl, redactUrl, STORE_SCHEMES } from "./store/url.js";
export { INVOCACHE_VERSION } from "./version.js";
