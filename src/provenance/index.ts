export {
  IDENTITY_BYPRODUCT,
  INVOCACHE_BUILDER_ID,
  INVOCATION_BUILD_TYPE_V1,
  MODEL_DEPENDENCY,
  RESPONSE_BYPRODUCT,
  SLSA_PROVENANCE_V1,
  STAMP_SUFFIX,
  STATEMENT_TYPE_V1,
} from "./constants.js";
export {
  type DsseEnvelope,
  type DsseSignature,
  decodeBase64,
  IN_TOTO_PAYLOAD_TYPE,
  pae,
  signEnvelope,
  verifySignature,
} from "./dsse.js";
export type { SignatureCheck } from "./envelope-check.js";
export {
  type KeyPairFiles,
  keyIdOf,
  readSigningKey,
  readTrustedKey,
  type SigningAlgorithm,
  type SigningKey,
  signingKey,
  type TrustedKey,
  trustedKey,
  writeKeyPair,
} from "./keys.js";
export {
  type RecorderLike,
  type StampArtifactOptions,
  stampArtifact,
  stampFromRecorder,
  stampPathFor,
} from "./stamp.js";
export {
  type DigestSet,
  type InvocationInternalParameters,
  type InvocationParameters,
  type ProvenanceStatement,
  provenanceStatement,
  type ResourceDescriptor,
  type StampOptions,
  type StampSubject,
} from "./statement.js";
export { type StampCheck, type VerifyOptions, type VerifyReport, verifyStamp } from "./verify.js";
