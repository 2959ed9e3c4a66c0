export {
  CREDENTIAL_URL_SUFFIXES,
  hasCredentials,
  isSecretEnvName,
  looksLikeKeyMaterial,
  MIN_SECRET_LENGTH,
  SECRET_ENV_NAMES,
  SECRET_ENV_SUFFIXES,
  type SecretEnvOptions,
  secretEnvValues,
} from "./env-names.js";
export { renderForm, SECRET_FORMS, type SecretForm, secretSpellings } from "./forms.js";
export { type OutwardError, redactOutward, redactOutwardError } from "./outward.js";
export {
  looksRandom,
  MAX_TOKEN_MATCH,
  SECRET_ANCHORS,
  SECRET_PATTERNS,
  type SecretPattern,
} from "./patterns.js";
export {
  createSecretScanner,
  type Redacted,
  type Restored,
  redactSecrets,
  restoreSecrets,
  SECRET_PLACEHOLDER,
  type SecretFinding,
  type SecretOptions,
  type SecretScanner,
  scanSecrets,
  secretPlaceholder,
} from "./redact.js";
