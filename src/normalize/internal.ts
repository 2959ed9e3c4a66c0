/**
 * The normalize module's face for the other modules of invocache, not for
 * users: no package subpath points here, so nothing in it is public API (the
 * API reports cover the index files). Other modules import normalize through
 * its index.ts or this file, never deeper (.dependency-cruiser.cjs).
 */
export { DISABLEABLE_RULES } from "./disable-rules.js";
export {
  type NormalizeOptions,
  normalizedParts,
  type PreparedNormalizer,
  prepareNormalizer,
  reuseToken,
} from "./normalize.js";
export { IDENTITY_SECRETS, type SecretRedactor, scannerFor } from "./secrets-rule.js";
