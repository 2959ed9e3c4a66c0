// The public API. Re-exports only: see docs/ for each part.
export { AmbiguousIdError, InvocacheError, StoreError } from "./errors.js";
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
