/**
 * The secret scanner as it was before the gitleaks-based shapes (kept only
 * for bench/secrets.bench.ts, to show the cost of redaction per write beside
 * it). Not used by the library.
 */
/**
 * Finding, redacting and restoring secrets in JSON values: the one
 * implementation the cassette writer, the recorder and the CLI share.
 *
 * Placeholders: `{secret:NAME}` for an environment variable's raw value,
 * `{secret:NAME:FORM}` for another spelling of it (`json`, `url`, `b64-0`…,
 * see forms.ts), and `{secret:shape-name}` for a known key shape found
 * without an environment variable (`{secret:openai-api-key}`). Env
 * placeholders can be restored from the current environment; shape
 * placeholders cannot (the value was never known), which is why shape names
 * use dashes: no environment variable can be called that.
 */

import {
  isSecretEnvName,
  type SecretEnvOptions,
  secretEnvValues,
} from "../../../src/secrets/env-names.js";
import { renderForm, type SecretForm, secretSpellings } from "../../../src/secrets/forms.js";
import type { JsonValue } from "../../../src/store/types.js";
import { SECRET_ANCHORS, SECRET_PATTERNS, type SecretPattern } from "./patterns.js";

/** Options of {@link redactSecrets}, {@link scanSecrets} and {@link restoreSecrets}. */
export interface SecretOptions extends SecretEnvOptions {
  /** Key shapes to look for. Default {@link SECRET_PATTERNS}; `[]` to look for env values only. */
  patterns?: readonly SecretPattern[];
}

/** A secret found in a value. Never holds the secret itself. */
export interface SecretFinding {
  /** Env variable name, or the key shape's name (`openai-api-key`). */
  name: string;
  /** JSON path of the string (or object key) that held it, e.g. `$.manifest.prompt`. */
  path: string;
  /** `env`: the value of a secret variable; `pattern`: a known key shape. */
  kind: "env" | "pattern";
  /** How an env value was spelled there (`raw`, `url`, `b64-1`…). */
  form?: SecretForm;
}

/** What {@link redactSecrets} returns. */
export interface Redacted<T> {
  /** The value with every secret replaced by its placeholder (the input itself when nothing was found). */
  value: T;
  /** One finding per secret and path, in the order found. */
  found: SecretFinding[];
}

/**
 * The placeholder written in place of a secret.
 *
 * @example
 * secretPlaceholder("OPENAI_API_KEY") // "{secret:OPENAI_API_KEY}"
 * secretPlaceholder("OPENAI_API_KEY", "url") // "{secret:OPENAI_API_KEY:url}"
 */
export function secretPlaceholder(name: string, form: SecretForm = "raw"): string {
  return form === "raw" ? `{secret:${name}}` : `{secret:${name}:${form}}`;
}

/**
 * Matches an env placeholder; group 1 is the variable, group 2 the form.
 * Linear: a literal, one bounded class, an optional group of literals.
 *
 * @example
 * [..."{secret:API_TOKEN:url}".matchAll(SECRET_PLACEHOLDER)][0]?.slice(1) // ["API_TOKEN", "url"]
 */
export const SECRET_PLACEHOLDER =
  /\{secret:([A-Za-z_][A-Za-z0-9_]{0,255})(?::(json|url|b64-[012]|b64u-[012]))?\}/g;

interface Needle {
  name: string;
  form: SecretForm;
  text: string;
  placeholder: string;
}

/** A scanner prepared for one environment snapshot; reuse it for many values. */
export interface SecretScanner {
  /** Redact one string; findings are reported under `path`. */
  redactString(text: string, path: string, found: SecretFinding[]): string;
  /** Redact every string (and object key) of a JSON value. */
  redact<T extends JsonValue>(value: T): Redacted<T>;
}

/**
 * Prepare a scanner: reads the environment once and lists every spelling of
 * every secret value, longest first.
 *
 * @example
 * const scanner = createSecretScanner({ env: { OPENAI_API_KEY: "sk-…" } });
 * scanner.redact({ prompt: "key sk-…" }).value // { prompt: "key {secret:OPENAI_API_KEY}" }
 */
export function createSecretScanner(opts: SecretOptions = {}): SecretScanner {
  const needles: Needle[] = [];
  for (const [name, value] of secretEnvValues(opts)) {
    for (const { form, text } of secretSpellings(value)) {
      needles.push({ name, form, text, placeholder: secretPlaceholder(name, form) });
    }
  }
  // Longest first: a secret that contains another (or a longer spelling of it) goes whole.
  needles.sort((a, b) => b.text.length - a.text.length);
  const patterns = opts.patterns ?? SECRET_PATTERNS;
  // The anchor pre-check is only valid for the built-in patterns.
  const precheck = patterns === SECRET_PATTERNS;

  const redactString = (text: string, path: string, found: SecretFinding[]): string => {
    let out = text;
    for (const n of needles) {
      if (!out.includes(n.text)) continue;
      out = out.split(n.text).join(n.placeholder);
      found.push({ name: n.name, path, kind: "env", form: n.form });
    }
    if (precheck && !SECRET_ANCHORS.test(out)) return out;
    for (const p of patterns) {
      let hit = false;
      p.regex.lastIndex = 0;
      out = out.replace(p.regex, (match: string, ...groups: unknown[]) => {
        // The secret is the whole match or its last group, so what precedes it is a prefix.
        const secret = p.group === undefined ? match : String(groups[p.group - 1] ?? "");
        const redact = p.refine === undefined ? secret : p.refine(secret);
        if (redact === undefined || redact === "") return match;
        hit = true;
        const before = match.slice(0, match.length - secret.length);
        return `${before}${secretPlaceholder(p.name)}${secret.slice(redact.length)}`;
      });
      if (hit) found.push({ name: p.name, path, kind: "pattern" });
    }
    return out;
  };

  const walk = (value: JsonValue, path: string, found: SecretFinding[]): JsonValue => {
    if (typeof value === "string") return redactString(value, path, found);
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      let copy: JsonValue[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const next = walk(value[i]!, `${path}[${i}]`, found);
        if (next !== value[i]) {
          copy ??= value.slice();
          copy[i] = next;
        }
      }
      return copy ?? value;
    }
    let changed = false;
    const entries: Array<[string, JsonValue]> = [];
    for (const key of Object.keys(value)) {
      // The path names the redacted key: a finding must never carry the secret.
      const keyFound: SecretFinding[] = [];
      const newKey = redactString(key, "", keyFound);
      const childPath = `${path}${pathKey(newKey)}`;
      for (const f of keyFound) found.push({ ...f, path: childPath });
      const child = value[key]!;
      const next = walk(child, childPath, found);
      if (newKey !== key || next !== child) changed = true;
      entries.push([newKey, next]);
    }
    // Object.fromEntries defines own properties: a `__proto__` key stays a key, as JSON.parse makes it.
    return changed ? Object.fromEntries(entries) : value;
  };

  return {
    redactString,
    redact<T extends JsonValue>(value: T): Redacted<T> {
      const found: SecretFinding[] = [];
      return { value: walk(value, "$", found) as T, found };
    },
  };
}

/**
 * Replace every secret in `value` by its placeholder: values of secret env
 * variables (raw, JSON-escaped, URL-encoded, base64) and known key shapes.
 * Object keys are scanned too. The input is not modified.
 *
 * @example
 * redactSecrets({ auth: "Bearer abc123def456ghi789" }, { env: {} })
 * // { value: { auth: "Bearer {secret:bearer-token}" }, found: [{ name: "bearer-token", path: "$.auth", kind: "pattern" }] }
 */
export function redactSecrets<T extends JsonValue>(
  value: T,
  opts: SecretOptions = {},
): Redacted<T> {
  return createSecretScanner(opts).redact(value);
}

/**
 * The secrets in `value`, without changing it: what `redactSecrets` would
 * replace. Use it to refuse a write, or in a pre-commit check.
 *
 * @example
 * scanSecrets({ prompt: `use ${process.env.OPENAI_API_KEY}` }) // [{ name: "OPENAI_API_KEY", path: "$.prompt", kind: "env", form: "raw" }]
 */
export function scanSecrets(value: JsonValue, opts: SecretOptions = {}): SecretFinding[] {
  return redactSecrets(value, opts).found;
}

/** What {@link restoreSecrets} returns. */
export interface Restored<T> {
  value: T;
  /** Variables whose placeholders were filled in. */
  restored: string[];
  /** Variables named by placeholders but absent from the environment (left as placeholders). */
  missing: string[];
}

/**
 * Put secret values back where {@link redactSecrets} left env placeholders,
 * from the current environment, in the spelling they had. Only variables the
 * secret-name rule accepts are filled in (a placeholder cannot pull `HOME`
 * into a value); shape placeholders (`{secret:openai-api-key}`) stay.
 *
 * @example
 * restoreSecrets({ h: "Bearer {secret:API_TOKEN}" }, { env: { API_TOKEN: "t0k3n-value" } }).value
 * // { h: "Bearer t0k3n-value" }
 */
export function restoreSecrets<T extends JsonValue>(
  value: T,
  opts: SecretOptions = {},
): Restored<T> {
  const env = opts.env ?? process.env;
  const isSecret = opts.isSecretName ?? isSecretEnvName;
  const restored = new Set<string>();
  const missing = new Set<string>();
  const fill = (text: string): string => {
    if (!text.includes("{secret:")) return text;
    SECRET_PLACEHOLDER.lastIndex = 0;
    return text.replace(SECRET_PLACEHOLDER, (match, name: string, form: string | undefined) => {
      const secret = isSecret(name) ? env[name] : undefined;
      if (secret === undefined) {
        if (isSecret(name)) missing.add(name);
        return match;
      }
      restored.add(name);
      return renderForm(secret, (form ?? "raw") as SecretForm);
    });
  };
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === "string") return fill(v);
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map(walk);
    return Object.fromEntries(Object.keys(v).map((k) => [fill(k), walk(v[k]!)]));
  };
  return { value: walk(value) as T, restored: [...restored], missing: [...missing] };
}

/** `.key` or `["odd key"]`, for JSON paths in findings. */
function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
