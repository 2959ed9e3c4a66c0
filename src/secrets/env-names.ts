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
  "_CONNECTION_STRING",
  "_CONN_STRING",
  "_CREDENTIALS",
];

/**
 * Names that hold a secret only when the value carries credentials: a
 * `postgres://user:pass@…` in `DATABASE_URL`, a `…;Password=…` DSN. Without
 * credentials (`REDIS_URL=redis://localhost:6379`) they are addresses, and
 * redacting them would hide useful facts from a recording.
 *
 * @example
 * CREDENTIAL_URL_SUFFIXES.includes("_URL") // true
 */
export const CREDENTIAL_URL_SUFFIXES: readonly string[] = ["_URL", "_URI", "_DSN", "_ENDPOINT"];

/**
 * Whether `value` carries credentials: a URL with a userinfo password, or a
 * connection string with a password or key field.
 *
 * @example
 * hasCredentials("postgres://app:s3cr3t@db:5432/app") // true
 * hasCredentials("redis://localhost:6379") // false
 */
export function hasCredentials(value: string): boolean {
  if (/:\/\/[^\s/?#@:]{0,256}:[^\s/?#@]{1,512}@/.test(value)) return true;
  return /(?:^|[;?&\s])(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)=[^;&\s]/i.test(
    value,
  );
}

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
export function isSecretEnvName(name: string, value?: string): boolean {
  const upper = name.toUpperCase();
  if (SECRET_ENV_NAMES.includes(upper) || SECRET_ENV_SUFFIXES.some((s) => upper.endsWith(s)))
    return true;
  return (
    value !== undefined &&
    (CREDENTIAL_URL_SUFFIXES.some((s) => upper.endsWith(s)) || upper === "DSN") &&
    hasCredentials(value)
  );
}

/** Options shared by everything that looks at environment secrets. */
export interface SecretEnvOptions {
  /** Where secret values come from. Default `process.env`, read at each call. */
  env?: Record<string, string | undefined>;
  /** Decide which variables hold secrets (the value is given for `*_URL`-style names). Default {@link isSecretEnvName}. */
  isSecretName?: (name: string, value?: string) => boolean;
  /** Variable names never treated as secrets, even when the rule says so. */
  allowNames?: readonly string[];
  /** Which values are worth looking for. Default {@link looksLikeKeyMaterial}. */
  acceptValue?: (value: string) => boolean;
}

/**
 * Whether a secret value looks like key material, the one rule for the
 * identity and for every store write (so a manifest written to a store is
 * the manifest that was hashed, and hashes to its id): at least
 * {@link MIN_SECRET_LENGTH} characters, no braces, and not a plain word.
 * A value of letters only counts when it is 16 or more characters of both
 * cases (a Hugging Face token has no digit). `POSTGRES_PASSWORD=postgres`
 * must not turn the word "postgres" into a placeholder in prompts,
 * responses and manifests: that protects nothing and damages recordings.
 *
 * @example
 * looksLikeKeyMaterial("postgres") // false
 * looksLikeKeyMaterial("sk-live-Zq9Xv8Wu7Ts6") // true
 * looksLikeKeyMaterial("hf_AbcDefGhiJklMnoPqrStuVwxYzAbcDefGh") // true
 */
export function looksLikeKeyMaterial(value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH || value.includes("{") || value.includes("}")) return false;
  if (!/[A-Za-z]/.test(value)) return /[0-9]/.test(value) && value.length >= 12;
  if (/^[A-Za-z]+$/.test(value))
    return value.length >= 16 && /[a-z]/.test(value) && /[A-Z]/.test(value);
  return true;
}

/**
 * The secret variables of `env` worth looking for: `[name, value]` pairs
 * whose name passes the rule and whose value passes `acceptValue` (default
 * {@link looksLikeKeyMaterial}), longest value first (so a secret that
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
    if (allowed.has(name) || !isSecret(name, value)) continue;
    if (!(opts.acceptValue ?? looksLikeKeyMaterial)(value)) continue;
    out.push([name, value]);
  }
  return out.sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1));
}
