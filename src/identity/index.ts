export { hashArtifact } from "./artifact.js";
export { canonicalJson, wtf8 } from "./canonical-json.js";
export { conversationPrompt } from "./conversation.js";
export type { FieldDiff } from "./explain.js";
export {
  IDENTITY_DOMAIN_V1,
  IDENTITY_VERSION,
  invocationIdentity,
  manifestBytes,
  manifestIdentity,
} from "./identity.js";
export { explainIdentity, type Manifest } from "./kinds.js";
export {
  assertManifest,
  type IdentityOptions,
  type InvocationRequest,
  invocationManifest,
  requestRulesFired,
} from "./manifest.js";
export type { ManifestValue, ModelManifest } from "./manifest-types.js";
export {
  clearNormalizationReuse,
  configureNormalizationReuse,
  DEFAULT_REUSE_BYTES,
  type NormalizationReuseOptions,
  type NormalizationReuseStats,
  normalizationReuseStats,
} from "./normalized-reuse.js";
export {
  isIdentity,
  isIdentityPrefix,
  isManifestField,
  MANIFEST_FIELDS,
  type ManifestField,
  type ManifestProblem,
  manifestProblem,
  REQUIRED_MANIFEST_FIELDS,
} from "./schema.js";
export { SHA256_BACKEND, sha256Hex } from "./sha256.js";
export { MIN_PREFIX_LENGTH, resolvePrefix, shortId } from "./short-id.js";
export { manifestArgRules, type ToolArgRules, ToolArgRulesError } from "./tool-arg-rules.js";
export type {
  ToolInvocationRequest,
  ToolManifest,
  ToolManifestV1,
  ToolManifestV2,
  ToolMethod,
} from "./tool-manifest.js";
