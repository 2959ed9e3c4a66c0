/**
 * The `secret` rule: key material never enters a manifest. Values of secret
 * environment variables (in every spelling) and known key shapes become
 * `{secret:NAME}` before anything else matches, so a key (or part of one)
 * can never be hashed, stored, stamped or shown in a miss report, and
 * rotating a key never changes an identity.
 *
 * Only env values that look like key material count (IDENTITY_SECRETS).
 * Reading the environment is this rule's one contact with the machine, like
 * resolving roots: the default scanner snapshots `process.env` on first use
 * (and again after {@link refreshSecretEnv}); recorders snapshot at creation.
 */
import { looksLikeKeyMaterial } from "../secrets/env-names.js";
import { createSecretScanner, type SecretOptions, type SecretScanner } from "../secrets/redact.js";

/** How `normalizePrompt` finds secrets: default (env + shapes), off, options, or a prepared scanner. */
export type SecretsSetting = false | SecretOptions | SecretScanner | undefined;

/**
 * The identity only looks for env values that look like key material, so the
 * identity never depends on a machine whose `POSTGRES_PASSWORD` is
 * "postgres". (Stores still redact every secret env value in responses.)
 */
export const IDENTITY_SECRETS: SecretOptions = { acceptValue: looksLikeKeyMaterial };

let defaultScanner: SecretScanner | undefined;
const byOptions = new WeakMap<SecretOptions, SecretScanner>();

/**
 * Forget the default scanner's snapshot of the environment; the next
 * normalization reads `process.env` again.
 *
 * @example
 * process.env.MY_SERVICE_TOKEN = "t0k3n-abcdef";
 * refreshSecretEnv();
 */
export function refreshSecretEnv(): void {
  defaultScanner = undefined;
}

/** The scanner for a setting, or undefined when the rule is off. */
export function scannerFor(setting: SecretsSetting): SecretScanner | undefined {
  if (setting === false) return undefined;
  if (setting === undefined) {
    defaultScanner ??= createSecretScanner(IDENTITY_SECRETS);
    return defaultScanner;
  }
  if (typeof (setting as SecretScanner).redactString === "function")
    return setting as SecretScanner;
  const opts = setting as SecretOptions;
  let scanner = byOptions.get(opts);
  if (scanner === undefined) {
    scanner = createSecretScanner({ ...IDENTITY_SECRETS, ...opts });
    byOptions.set(opts, scanner);
  }
  return scanner;
}
