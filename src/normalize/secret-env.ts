/**
 * The secret rule's one contact with the machine, like roots.ts for paths:
 * building a scanner reads the environment, and this file is where that
 * happens. The pure rule (secrets-rule.ts) only ever sees a ready
 * {@link SecretRedactor}; callers that pass none get the default below, a
 * snapshot of `process.env` taken on first use (and again after
 * {@link refreshSecretEnv}). Recorders build their own at creation.
 */
import {
  createSecretScanner,
  looksLikeKeyMaterial,
  type SecretOptions,
  type SecretScanner,
} from "../secrets/index.js";

/** What the secret rule needs from a scanner: redact a string, redact a JSON value. */
export type SecretRedactor = Pick<SecretScanner, "redactString" | "redact">;

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

/**
 * The scanner used when a caller passes no `secrets` setting: identity
 * options over a snapshot of `process.env`.
 *
 * @example
 * defaultSecretRedactor().redactString(`key ${process.env.OPENAI_API_KEY}`, "$", [])
 */
export function defaultSecretRedactor(): SecretRedactor {
  defaultScanner ??= createSecretScanner({ ...IDENTITY_SECRETS, env: { ...process.env } });
  return defaultScanner;
}

/**
 * The scanner for caller-given options (identity options underneath; `env`
 * defaults to a snapshot of `process.env`), cached per options object.
 *
 * @example
 * secretRedactorFor({ env: { API_TOKEN: "t0k3n-value" } })
 */
export function secretRedactorFor(opts: SecretOptions): SecretRedactor {
  let scanner = byOptions.get(opts);
  if (scanner === undefined) {
    scanner = createSecretScanner({ ...IDENTITY_SECRETS, env: { ...process.env }, ...opts });
    byOptions.set(opts, scanner);
  }
  return scanner;
}
