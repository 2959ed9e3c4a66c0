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
import type { JsonValue } from "../json/index.js";
import { decodedMayHoldAnchor } from "./base64-anchors.js";
import { classTableOf } from "./class-table.js";
import { isSecretEnvName, type SecretEnvOptions, secretEnvValues } from "./env-names.js";
import { renderForm, type SecretForm, secretSpellings } from "./forms.js";
import { type CharRun, nextLongRun } from "./long-runs.js";
import {
  MAX_TOKEN_MATCH,
  SECRET_ANCHORS,
  SECRET_PATTERNS,
  type SecretPattern,
} from "./patterns.js";
import { type PatternFilter, patternFilter } from "./prefilter.js";
import { type SharedRuns, sharedRuns } from "./shared-runs.js";

/** Shorter texts (a decoded run, a header) take the single anchor test: the filter's set-up costs more. */
const PREFILTER_MIN = 256;

/** The literal prefilter of the built-in patterns, built once, on the first text that needs it. */
let builtInFilter: PatternFilter | undefined;

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
  /\{secret:([A-Za-z_][A-Za-z0-9_]{0,255})(?::(json|json2|url|form|b64-[012]|b64u-[012]))?\}/g;

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
  const all: Needle[] = [];
  for (const [name, value] of secretEnvValues(opts)) {
    for (const { form, text } of secretSpellings(value)) {
      all.push({ name, form, text, placeholder: secretPlaceholder(name, form) });
    }
  }
  // A value found inside a placeholder we write (":MY_API_KEY", "openai-api-key") would
  // be replaced again on a second pass: redaction must be idempotent, so it is not searched.
  // (Listed only when there are values: most environments hold none the identity looks for.)
  const written =
    all.length === 0
      ? []
      : [
          ...all.map((n) => n.placeholder),
          ...(opts.patterns ?? SECRET_PATTERNS).map((p) => secretPlaceholder(p.name)),
        ];
  const needles = all.filter((n) => !written.some((w) => w.includes(n.text)));
  // Longest first: a secret that contains another (or a longer spelling of it) goes whole.
  needles.sort((a, b) => b.text.length - a.text.length);
  const patterns = opts.patterns ?? SECRET_PATTERNS;
  // The anchor pre-check is only valid for the built-in patterns.
  const precheck = patterns === SECRET_PATTERNS;
  const compiled = patterns.map(compilePattern);

  /** Key shapes only (no env values): the raw text, then what percent- and base64-encoding hide. */
  const shapes = (text: string, path: string, found: SecretFinding[], depth: number): string => {
    let out = text;
    let runs: SharedRuns | undefined;
    if (!precheck || out.length < PREFILTER_MIN) {
      if (!precheck || SECRET_ANCHORS.test(out)) {
        for (const p of compiled) out = applyPattern(out, p, path, found);
      }
    } else {
      // Only the patterns whose required literal occurs (prefilter.ts). A
      // placeholder written by an earlier pattern adds no literal a later one
      // can match on; the property test against the unfiltered scan checks it.
      builtInFilter ??= patternFilter(SECRET_PATTERNS.map((p) => p.regex));
      // The prefilter's token runs and the base64 runs decoded below, from one
      // sampled pass (shared-runs.ts); the base64 runs are used only if nothing
      // before them changed the text.
      if (depth > 0 && compiled.length > 0) {
        runs = sharedRuns(out, BASE64_CHARS, BASE64_MIN_RUN, out.length >>> 1);
      }
      const on = builtInFilter.candidates(out, runs);
      const anchors = on.includes(undefined) && SECRET_ANCHORS.test(out);
      for (let i = 0; i < compiled.length; i++) {
        if (on[i] ?? anchors) out = applyPattern(out, compiled[i]!, path, found);
      }
    }
    if (depth > 0 && compiled.length > 0) {
      if (out.includes("%"))
        out = decodedRuns(out, PERCENT_RUN, "%", decodePercent, path, found, shapes, depth);
      const skip = precheck ? cannotHoldAnchor : undefined;
      const known = out === text ? runs?.base64 : undefined;
      out = decodedRuns(
        out,
        BASE64_RUN,
        undefined,
        decodeBase64,
        path,
        found,
        shapes,
        depth,
        skip,
        known,
      );
    }
    return out;
  };

  const redactString = (text: string, path: string, found: SecretFinding[]): string => {
    let out = text;
    for (const n of needles) {
      if (!out.includes(n.text)) continue;
      out = out.split(n.text).join(n.placeholder);
      found.push({ name: n.name, path, kind: "env", form: n.form });
    }
    return shapes(out, path, found, 1);
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
    const keys = Object.keys(value);
    const taken = new Set(keys);
    for (const key of keys) {
      // The path names the redacted key: a finding must never carry the secret.
      const keyFound: SecretFinding[] = [];
      let newKey = redactString(key, "", keyFound);
      if (newKey !== key) {
        // Two keys redacted to one placeholder must stay two keys: nothing recorded is dropped.
        let n = 2;
        const base = newKey;
        while (taken.has(newKey)) newKey = `${base} (${n++})`;
        taken.add(newKey);
      }
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
  /** Placeholders left inside longer strings (never restored: see {@link restoreSecrets}). */
  kept: number;
}

/** A string that is one env placeholder and nothing else. */
const WHOLE_PLACEHOLDER = new RegExp(`^${SECRET_PLACEHOLDER.source}$`);

/**
 * Put secret values back where {@link redactSecrets} left env placeholders,
 * from the current environment, in the spelling they had.
 *
 * Only for cassettes you trust: whoever can edit a recording decides where
 * a restored value goes. So restoring is restricted to where a placeholder
 * is recorded from a value that WAS the secret: a string that is exactly one
 * placeholder (`"token": "{secret:GITHUB_TOKEN}"`). A placeholder inside a
 * longer string (`"https://evil.example/?t={secret:GITHUB_TOKEN}"`,
 * `"Bearer {secret:API_TOKEN}"`) stays a placeholder: filling it would let
 * the recording build a URL, a header or a message around the real key.
 * Only variables the secret-name rule accepts are filled in (a placeholder
 * cannot pull `HOME` into a value); shape placeholders
 * (`{secret:openai-api-key}`) stay. `kept` counts the placeholders left.
 *
 * @example
 * restoreSecrets({ t: "{secret:API_TOKEN}" }, { env: { API_TOKEN: "t0k3n-value" } }).value
 * // { t: "t0k3n-value" }
 * restoreSecrets({ u: "https://x.example/?t={secret:API_TOKEN}" }, { env: { API_TOKEN: "t0k3n-value" } }).value
 * // unchanged
 */
export function restoreSecrets<T extends JsonValue>(
  value: T,
  opts: SecretOptions = {},
): Restored<T> {
  const env = opts.env ?? process.env;
  const isSecret = opts.isSecretName ?? isSecretEnvName;
  const restored = new Set<string>();
  const missing = new Set<string>();
  let kept = 0;
  const fill = (text: string): string => {
    if (!text.includes("{secret:")) return text;
    const m = text.length <= 300 ? WHOLE_PLACEHOLDER.exec(text) : null;
    if (m === null) {
      kept++;
      return text;
    }
    const name = m[1]!;
    const secret = env[name];
    if (secret === undefined) {
      if (isSecret(name)) missing.add(name);
      return text;
    }
    if (!isSecret(name, secret)) return text;
    restored.add(name);
    return renderForm(secret, (m[2] ?? "raw") as SecretForm);
  };
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === "string") return fill(v);
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map(walk);
    // Keys are never filled: a key is where a recording would put a value to exfiltrate.
    return Object.fromEntries(
      Object.keys(v).map((k) => {
        if (k.includes("{secret:")) kept++;
        return [k, walk(v[k]!)];
      }),
    );
  };
  return { value: walk(value) as T, restored: [...restored], missing: [...missing], kept };
}

/** `.key` or `["odd key"]`, for JSON paths in findings. */
function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

// ---- the matching engine -------------------------------------------------------

interface Compiled {
  p: SecretPattern;
  /**
   * ASCII characters the secret may continue with past the regex's bound;
   * null until the pattern first matches (most patterns never do in a
   * process, and a scanner is made before its first scan).
   */
  extend: Uint8Array | undefined | null;
}

// Scanners are made per write (they read the environment): compile each pattern once.
const compiledPatterns = new WeakMap<SecretPattern, Compiled>();

function compilePattern(p: SecretPattern): Compiled {
  let c = compiledPatterns.get(p);
  if (c === undefined) {
    c = { p, extend: p.extend === undefined ? undefined : null };
    compiledPatterns.set(p, c);
  }
  return c;
}

/** The end of the run of `table` characters starting at `from`. A loop: no regex stack, any length. */
function runEnd(text: string, from: number, table: Uint8Array): number {
  let end = from;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (c >= 128 || table[c] === 0) break;
    end++;
  }
  return end;
}

/**
 * Every match of one pattern replaced by its placeholder. The regex finds
 * a bounded prefix; the secret is then extended over its `extend` class, so
 * a token of any length is redacted whole and the scan goes on after it.
 */
function applyPattern(text: string, c: Compiled, path: string, found: SecretFinding[]): string {
  const { p } = c;
  p.regex.lastIndex = 0;
  let out = "";
  let last = 0;
  let hit = false;
  for (let m = p.regex.exec(text); m !== null; m = p.regex.exec(text)) {
    const matchEnd = m.index + m[0].length;
    const secretStart =
      p.group === undefined ? m.index : matchEnd - String(m[p.group] ?? "").length;
    let extend = c.extend;
    if (extend === null) {
      extend = p.extend === undefined ? undefined : classTableOf(p.extend);
      c.extend = extend;
    }
    const end = extend === undefined ? matchEnd : runEnd(text, matchEnd, extend);
    const secret = text.slice(secretStart, end);
    const redact = p.refine === undefined ? secret : p.refine(secret);
    if (redact !== undefined && redact !== "") {
      hit = true;
      out += `${text.slice(last, secretStart)}${secretPlaceholder(p.name)}`;
      last = secretStart + redact.length;
    }
    p.regex.lastIndex = Math.max(end, last, m.index + 1);
  }
  if (hit) found.push({ name: p.name, path, kind: "pattern" });
  return hit ? out + text.slice(last) : text;
}

/** Percent-encoded runs (a query value, a form field): the characters encodeURIComponent leaves, and escapes. */
export const PERCENT_CLASS = /[A-Za-z0-9._~!*'()%+-]/;
const PERCENT_CHARS = classTableOf(PERCENT_CLASS);
// Base64 (standard or URL-safe) runs of 20+ characters (found by a loop; the regex names them).
const BASE64_RUN = new RegExp(`[A-Za-z0-9+/_-]{20,${MAX_TOKEN_MATCH}}`, "g");
/** The characters of a base64 run (both alphabets, and `=`). */
export const BASE64_CLASS = /[A-Za-z0-9+/_=-]/;
const BASE64_CHARS = classTableOf(BASE64_CLASS);
const PERCENT_RUN = /%[0-9A-Fa-f]{2}/g;
/** Base64 runs shorter than this are not tried (found by reading every 20th character: long-runs.ts). */
const BASE64_MIN_RUN = 20;

function decodePercent(run: string): string | undefined {
  // By hand, not decodeURIComponent: that throws on bad UTF-8, and an exception per run is slow.
  const bytes = Buffer.allocUnsafe(run.length);
  let n = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (
      c === 37 &&
      i + 2 < run.length &&
      isHex(run.charCodeAt(i + 1)) &&
      isHex(run.charCodeAt(i + 2))
    ) {
      bytes[n++] = Number.parseInt(run.slice(i + 1, i + 3), 16);
      i += 2;
    } else bytes[n++] = c === 43 ? 32 : c; // run characters are ASCII; `+` is a space in forms
  }
  return bytes.subarray(0, n).toString("utf8");
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/**
 * A base64 run not worth decoding: its decoded text is shorter than
 * {@link PREFILTER_MIN}, so `shapes` would scan it only if
 * {@link SECRET_ANCHORS} matched it, and its bytes show that cannot happen
 * (base64-anchors.ts). Only valid for the built-in patterns.
 */
function cannotHoldAnchor(text: string, start: number, end: number): boolean {
  return ((end - start) * 3) >>> 2 < PREFILTER_MIN && !decodedMayHoldAnchor(text, start, end);
}

function decodeBase64(run: string): string | undefined {
  // latin1: one character per byte, so ASCII key shapes survive whatever surrounds them.
  return Buffer.from(run, "base64").toString("latin1");
}

/**
 * Key shapes hidden under an encoding (a base64 `user:key`, a base64 JWT, a
 * URL-encoded PEM or connection string): each run of the encoding's
 * characters is decoded and scanned; when it holds a shape, the whole run
 * becomes that shape's placeholder (the run is the secret's spelling).
 * Runs are found by a short regex (`seed`) and extended by a loop; `skip`
 * may rule a run out before it is sliced and decoded.
 */
/**
 * The next run at or after `from`: base64 runs are found whole (nextLongRun);
 * percent runs by their `%XX` escape. Positions only: most runs are skipped,
 * and a skipped run is never sliced. (A function of its own, not a closure
 * made per call: the bundle's keepNames gives every named closure a
 * defineProperty each time it is made, 3 % of a memory hit.)
 */
function nextRun(
  text: string,
  from: number,
  seed: RegExp,
  table: Uint8Array,
  known: readonly number[] | undefined,
  k: number,
): CharRun | undefined {
  // Runs found already (shared-runs.ts): the k-th pair of start, end.
  if (known !== undefined) {
    return k < known.length ? { start: known[k]!, end: known[k + 1]! } : undefined;
  }
  if (seed === PERCENT_RUN) {
    seed.lastIndex = from;
    const m = seed.exec(text);
    return m === null ? undefined : { start: m.index, end: m.index + m[0].length };
  }
  return nextLongRun(text, from, table, BASE64_MIN_RUN);
}

function decodedRuns(
  text: string,
  seed: RegExp,
  mustHave: string | undefined,
  decode: (run: string) => string | undefined,
  path: string,
  found: SecretFinding[],
  shapes: (text: string, path: string, found: SecretFinding[], depth: number) => string,
  depth: number,
  skip?: (text: string, start: number, end: number) => boolean,
  known?: readonly number[],
): string {
  const table = seed === PERCENT_RUN ? PERCENT_CHARS : BASE64_CHARS;
  let out = "";
  let last = 0;
  let from = 0;
  let k = -2; // the run of `known` taken last
  for (;;) {
    k += 2;
    const m = nextRun(text, from, seed, table, known, k);
    if (m === undefined) break;
    // Extend left (never past the previous run) and right over the run's characters.
    let start = m.start;
    while (start > last) {
      const c = text.charCodeAt(start - 1);
      if (c >= 128 || table[c] === 0) break;
      start--;
    }
    const end = runEnd(text, m.end, table);
    from = Math.max(end, m.start + 1);
    // The shortest key shape, encoded, is longer than this: shorter runs cannot hold one.
    if (end - start < 16) continue;
    if (skip?.(text, start, end)) continue;
    const run = text.slice(start, end);
    if (mustHave !== undefined && !run.includes(mustHave)) continue;
    const decoded = decode(run);
    if (decoded === undefined || decoded.length < 8) continue;
    const inner: SecretFinding[] = [];
    shapes(decoded, path, inner, depth - 1);
    if (inner.length === 0) continue;
    for (const f of inner) found.push(f);
    out += `${text.slice(last, start)}${secretPlaceholder(inner[0]!.name)}`;
    last = end;
  }
  return last === 0 ? text : out + text.slice(last);
}
