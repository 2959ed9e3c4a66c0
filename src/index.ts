// The public API of the package root: the names of the design and every type
// their signatures need, as an explicit list (no `export *`), pinned by the
// API report in etc/invocache.api.md. Toolkits sit behind subpaths, each a
// module's index: invocache/identity, /normalize, /secrets, /store,
// /cassette, /recorder, /adapters, /provenance, /viewer, /vitest, and one
// per integration. Re-exports only.

export {
  type CreateFetchOptions,
  createFetch,
  currentInvocation,
  type FetchLike,
  type HostAliases,
  type HttpHead,
  type HttpRecording,
  type HttpResponseView,
  type InvocacheMiddleware,
  type InvocacheMiddlewareOptions,
  type InvocationContext,
  invocacheMiddleware,
  type SseEvent,
  type StepRequest,
  type WrapStepOptions,
  withInvocation,
  wrapStep,
} from "./adapters/index.js";
export {
  type CassetteItem,
  type CassetteOptions,
  type CassetteSource,
  type CassetteStore,
  type CassetteUsage,
  cassetteStore,
  type OnStale,
} from "./cassette/index.js";
export {
  AmbiguousIdError,
  CassetteError,
  EntryFormatError,
  InvalidOptionError,
  InvocacheError,
  type InvocacheErrorOptions,
  MetadataMissingError,
  type SecretFindingInfo,
  SecretLeakError,
  StampError,
  StoreError,
  UnsupportedEntryVersionError,
  UnusedEntriesError,
} from "./errors.js";
export {
  explainIdentity,
  type FieldDiff,
  hashArtifact,
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  type Manifest,
  type ManifestValue,
  shortId,
} from "./identity/index.js";
export { type ToolArgRules, ToolArgRulesError } from "./identity/tool-arg-rules.js";
// Tool calls and MCP (issue 13): the tool identity kind, the side-effect
// rule, per-kind modes and wrapTool. wrapMcpClient lives in "invocache/mcp".
export {
  assertToolManifest,
  isToolKind,
  TOOL_IDENTITY_DOMAIN_V1,
  TOOL_IDENTITY_DOMAIN_V2,
  TOOL_IDENTITY_VERSION,
  TOOL_METHODS,
  type ToolInvocationRequest,
  type ToolManifest,
  type ToolManifestV1,
  type ToolManifestV2,
  type ToolMethod,
  toolIdentity,
  toolIdentityV1,
  toolManifest,
  toolManifestBytes,
  toolManifestIdentity,
  toolManifestV1,
  toolRecipeVersion,
} from "./identity/tool-manifest.js";
export {
  NORMALIZATION_RULES,
  NORMALIZATION_VERSION,
  type NormalizationRule,
  type NormalizeOptions,
  normalizePrompt,
  type SecretsSetting,
} from "./normalize/index.js";
// Usage, cost and savings accounting (docs/observability.md).
export {
  type CallEnd,
  type CallStart,
  INSTRUMENTATION_NAME,
  type MeterProviderLike,
  type TelemetryOptions,
  type TracerProviderLike,
} from "./observability/otel.js";
export {
  type StampArtifactOptions,
  type StampCheck,
  type StampOptions,
  stampArtifact,
  type VerifyOptions,
  type VerifyReport,
  verifyStamp,
} from "./provenance/index.js";
export {
  answerLive,
  type CallOptions,
  createRecorder,
  DivergenceError,
  type EntrySizes,
  EntryTooLargeError,
  type InvocationKind,
  type KindModes,
  type Listener,
  Live,
  type LiveStreamResult,
  type MissDetails,
  type Mode,
  type NearestEntry,
  type RecordedStream,
  type Recorder,
  type RecorderEvents,
  type RecorderIdentityDefaults,
  type RecorderOptions,
  type RecorderStats,
  ReplayMissError,
  type ResolvedModes,
  type RunInfo,
  type ServedInfo,
  StaleEntryError,
  type StreamOpened,
  type StreamOptions,
  type StreamResult,
  type StreamStart,
  ToolCallError,
  ToolDivergenceError,
  type ToolEffects,
  type ToolPolicy,
  ToolResultError,
  UnknownInvocationError,
} from "./recorder/index.js";
export {
  type GetOptions,
  type JsonValue,
  type MetaQuery,
  type OpenStoreOptions,
  openStore,
  type SetOptions,
  type SqliteDriver,
  type Store,
  type StoredMeta,
  type StorePolicy,
} from "./store/index.js";
export {
  type AiSdkToolLike,
  type RecordAiSdkToolsOptions,
  recordAiSdkTools,
  type WrapToolOptions,
  wrapTool,
} from "./tools/index.js";
export type {
  Accounts,
  CallSummary,
  Cost,
  PriceSnapshot,
  Spend,
  Tally,
  Usage,
  UsageShape,
} from "./usage/index.js";
export { INVOCACHE_VERSION } from "./version.js";
