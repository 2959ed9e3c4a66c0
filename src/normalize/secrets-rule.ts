/**
 * The `secret` rule: key material never enters a manifest. Values of secret
 * environment variables (in every spelling) and known key shapes become
 * `{secret:NAME}` before anything else matches, so a key (or part of one)
 * can never be hashed, stored, stamped or shown in a miss report, and
 * rotating a key never changes an identity.
 *
 * The rule is pure: it works through a {@link SecretRedactor} handed to it.
 * Where that comes from when the caller gives none (a snapshot of the
 * environment) is secret-env.ts, the rule's one contact with the machine.
 */
import type { SecretOptions } from "../secrets/index.js";
import { defaultSecretRedactor, type SecretRedactor, secretRedactorFor } from "./secret-env.js";

export {
  IDENTITY_SECRETS,
  refreshSecretEnv,
  type SecretRedactor,
} from "./secret-env.js";

/** How `normalizePrompt` finds secrets: default (env + shapes), off, options, or a prepared scanner. */
export type SecretsSetting = false | SecretOptions | SecretRedactor | undefined;

/** The redactor for a setting, or undefined when the rule is off. */
export function scannerFor(setting: SecretsSetting): SecretRedactor | undefined {
  if (setting === false) return undefined;
  if (setting === undefined) return defaultSecretRedactor();
  if (typeof (setting as SecretRedactor).redactString === "function") {
    return setting as SecretRedactor;
  }
  return secretRedactorFor(setting as SecretOptions);
}
