/**
 * Which environment variables hold secrets. Their values are what a cassette
 * must never contain: the key a test ran with is the most common thing
 * committed by accident (vcrpy, Polly.js and nock all have issues about it).
 */

/**
 * The name rule, as data: a variable is secret when its name, upper-cased,
 * ends with one of these suffixes or equals one of the exact names.
 * `_API_KEY`, `_TOKEN`, `_SECRET` and `AUTHORIZATION` are the documented core;
 * the others are the same idea under other spellings (AWS, passwords, PEM keys).
 *
 * @example
 * SECRET_ENV_SUFFIXES.some((s) => "OPENAI_API_KEY".endsWith(s)) // true
 */
export const SECRET_ENV_SUFFIXES: readonly string[] = [
  "_API_KEY",
  "_APIKEY",
  "_TOKEN",
  "_SECRET",
  "_SECRET_KEY",
  "_SECRET_ACCESS_KEY",
  "_PASSWORD",
  "_PRIVATE_KEY",
];

/**
 * Names that are secret as a whole.
 *
 * @example
 * SECRET_ENV_NAMES.includes("AUTHORIZATION") // true
 */
export const SECRET_ENV_NAMES: readonly string[] = [
  "AUTHORIZATION",
  "API_KEY",
  "TOKEN",
  "SECRET",
  "PASSWORD",
];

/**
 * Shortest value treated as a secret. Shorter values ("1", "true", "dev")
 * would redact ordinary words all over a cassette and protect nothing.
 *
 * @example
 * secretEnvValues({ env: { DEV_TOKEN: "dev" } }) // [] (shorter than MIN_SECRET_LENGTH)
 */
export const MIN_SECRET_LENGTH = 8;

/**
 * Whether `name` names a secret-holding variable under the default rule.
 *
 * @example
 * isSecretEnvName("OPENAI_API_KEY") // true
 * isSecretEnvName("GITHUB_TOKEN") // true
 * isSecretEnvName("HOME") // false
 */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_ENV_NAMES.includes(upper) || SECRET_ENV_SUFFIXES.some((s) => upper.endsWith(s));
}

/** Options shared by everything that looks at environment secrets. */
export interface SecretEnvOptions {
  /** Where secret values come from. Default `process.env`, read at each call. */
  env?: Record<string, string | undefined>;
  /** Decide which variable names hold secrets. Default {@link isSecretEnvName}. */
  isSecretName?: (name: string) => boolean;
  /** Variable names never treated as secrets, even when the rule says so. */
  allowNames?: readonly string[];
  /** Which values are worth looking for. Default: every value of {@link MIN_SECRET_LENGTH} or more. */
  acceptValue?: (value: string) => boolean;
}

/**
 * Whether a secret value looks like key material: 12 characters or more,
 * with letters and digits, and no braces. The identity uses only such values
 * (see src/normalize/secrets-rule.ts): `POSTGRES_PASSWORD=postgres` must not
 * turn the word "postgres" in a prompt into a placeholder, or identities would
 * depend on the machine's environment.
 *
 * @example
 * looksLikeKeyMaterial("postgres") // false
 * looksLikeKeyMaterial("sk-live-Zq9Xv8Wu7Ts6") // true
 */
export function looksLikeKeyMaterial(value: string): boolean {
  return (
    value.length >= 12 &&
    /[0-9]/.test(value) &&
    /[A-Za-z]/.test(value) &&
    !value.includes("{") &&
    !value.includes("}")
  );
}

/**
 * The secret variables of `env` worth looking for: `[name, value]` pairs
 * whose name passes the rule and whose value is at least
 * {@link MIN_SECRET_LENGTH} characters, longest value first (so a secret that
 * contains another is replaced whole).
 *
 * @example
 * secretEnvValues({ env: { OPENAI_API_KEY: "sk-…", HOME: "/home/u" } }) // [["OPENAI_API_KEY", "sk-…"]]
 */
export function secretEnvValues(opts: SecretEnvOptions = {}): Array<[string, string]> {
  const env = opts.env ?? process.env;
  const isSecret = opts.isSecretName ?? isSecretEnvName;
  const allowed = new Set(opts.allowNames ?? []);
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) continue;
    // A value that is not well-formed Unicode cannot be spelled URL-encoded
    // (encodeURIComponent throws) and cannot appear in well-formed text.
    if (!value.isWellFormed()) continue;
    if (allowed.has(name) || !isSecret(name)) continue;
    if (opts.acceptValue !== undefined && !opts.acceptValue(value)) continue;
    out.push([name, value]);
  }
  return out.sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1));
}
