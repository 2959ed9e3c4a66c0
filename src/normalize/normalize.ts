/**
 * `normalizePrompt`: apply the rule table to a prompt. Pure text work apart
 * from resolving root spellings (roots.ts), which is cached.
 */
import { type DisabledRules, disabledRules, enabledSpellings } from "./disable-rules.js";
import { compileRoots, type RootMatcher } from "./root-matcher.js";
import { type RootOptions, rootSpellings } from "./roots.js";
import type { NormalizationRule } from "./rules.js";
import { type RuleMatch, scan } from "./scanner.js";
import { type SecretRedactor, type SecretsSetting, scannerFor } from "./secrets-rule.js";
import { collapseWhitespace } from "./whitespace.js";

/** Options of {@link normalizePrompt}. */
export interface NormalizeOptions {
  /** Run-scoped project root: becomes `{project}`. */
  projectPath?: string | null | undefined;
  /** Home directory: becomes `{home}`. Default `os.homedir()`. */
  homeDir?: string | undefined;
  /** Temporary directories: become `{tmp}`. Default `os.tmpdir()` and `/tmp` (with real paths and macOS `/private` forms). */
  tmpDirs?: readonly string[] | undefined;
  /** Extra named roots: `{ cache: "/var/cache/ci" }` turns that path into `{cache}`. */
  roots?: Readonly<Record<string, string>> | undefined;
  /** Extra rules applied after the table, in order. Keep them idempotent. */
  rules?: readonly NormalizationRule[] | undefined;
  /**
   * The `secret` rule: default on (secret env values and known key shapes
   * become `{secret:NAME}`); `false` turns it off; secret options or a
   * prepared scanner (`createSecretScanner`) replace the default.
   */
  secrets?: SecretsSetting;
  /**
   * Built-in rules to turn off, by their name in the table: `"unicode-nfc"`,
   * `"whitespace"`, `"root:project"`, `"root:tmp"`, `"root:home"`,
   * `"root:<name>"` (every extra root) or `"root:NAME"` (one), `"timestamp"`,
   * `"uuid"`, `"epoch-millis"`. The `secret` rule is turned off with
   * `secrets: false` instead. Like roots and rules, this changes identities:
   * record and replay with the same setting.
   */
  disableRules?: readonly string[] | undefined;
}

/** What {@link explainNormalization} returns. */
export interface NormalizationReport {
  /** The normalized text (same as `normalizePrompt`). */
  output: string;
  /** Every replacement made by the table's scan, in order, in whitespace-collapsed coordinates. */
  matches: RuleMatch[];
  /** How often each rule fired (including `unicode-nfc`, `whitespace` and caller rules). */
  counts: Record<string, number>;
}

/**
 * Normalize a prompt so that machine- and run-volatile noise (checkout, home
 * and tmp paths, UUIDs, timestamps, whitespace layout) no longer changes it,
 * while everything else is kept. Idempotent; linear time; never throws on
 * any string (lone surrogates included).
 *
 * @example
 * normalizePrompt("Fix /work/run-7/src/a.ts\n(session 3f2504e0-4f89-11d3-9a0c-0305e82c3301)", {
 *   projectPath: "/work/run-7",
 * }); // "Fix {project}/src/a.ts (session {uuid})"
 */
export function normalizePrompt(text: string, opts: NormalizeOptions = {}): string {
  checkText(text);
  return run(text, resolve(opts), undefined);
}

/**
 * Like {@link normalizePrompt}, and also report which rules fired where
 * (`invocache normalize --explain`, miss reports).
 *
 * @example
 * explainNormalization("at 2026-09-09T10:00:00Z").counts // { timestamp: 1 }
 */
export function explainNormalization(
  text: string,
  opts: NormalizeOptions = {},
): NormalizationReport {
  checkText(text);
  return explain(text, resolve(opts));
}

/**
 * `normalizePrompt` and `explainNormalization` over one option set, for
 * many strings (the strings of one request's conversation, its prompt and
 * task): what the options resolve to (which rules are off, the compiled
 * roots, the secret scanner) is worked out once, on first use, instead of
 * once per string. Resolving is not free even when every piece is cached:
 * the default tmp directories alone are a few environment reads.
 *
 * The options are read on first use, so errors come in the same order as
 * the per-string calls (the text is checked first, then the options).
 * Scoped to one synchronous piece of work: a normalizer kept across calls
 * would miss a later change of the environment or of the options object.
 */
export interface PreparedNormalizer {
  normalize(text: string): string;
  explain(text: string): NormalizationReport;
}

/** A {@link PreparedNormalizer} over `opts` (see there for its scope). */
export function prepareNormalizer(opts: NormalizeOptions = {}): PreparedNormalizer {
  return new Prepared(opts);
}

/** A class, not closures: one small object per request on the hit path. */
class Prepared implements PreparedNormalizer {
  readonly #opts: NormalizeOptions;
  #state: Resolved | undefined;

  constructor(opts: NormalizeOptions) {
    this.#opts = opts;
  }

  #resolved(): Resolved {
    this.#state ??= resolve(this.#opts);
    return this.#state;
  }

  normalize(text: string): string {
    checkText(text);
    return run(text, this.#resolved(), undefined);
  }

  explain(text: string): NormalizationReport {
    checkText(text);
    return explain(text, this.#resolved());
  }

  /** See {@link normalizedParts}. */
  parts(text: string): readonly string[] {
    checkText(text);
    return runParts(text, this.#resolved());
  }

  #token: object | undefined | null = null;

  /** See {@link reuseToken}. */
  token(): object | undefined {
    if (this.#token === null) this.#token = tokenOf(this.#resolved());
    return this.#token;
  }
}

/**
 * A token standing for what a prepared normalizer's options resolved to:
 * the same object exactly when two normalizers give every string the same
 * output (the same rules turned off, the same compiled roots, the same
 * secret scanner, the same caller rules), so a cache of outputs kept across
 * requests (identity/normalized-reuse.ts) can key on it. Undefined when no
 * such promise can be made (caller rules that are not well-formed: those
 * throw in `run`, and must keep throwing). Resolves the options, so it
 * throws what `normalize` would (call it after checking the text).
 *
 * Why these parts are the whole story: `run` reads nothing but the text and
 * the {@link Resolved} parts; the disabled-rule set, the root matcher and the
 * default scanner are each cached per value they came from, so a change of
 * environment or options that changes them (a new root spelling,
 * `refreshSecretEnv`, another `disableRules`) gives a new object and so a
 * new token. Caller rules are not objects the library owns (a caller may
 * change a rule's replacement in place), so they take part by value: name,
 * pattern source and flags, replacement.
 */
export function reuseToken(prepared: PreparedNormalizer): object | undefined {
  if (!(prepared instanceof Prepared)) return undefined;
  return prepared.token();
}

/**
 * `prepared.normalize(text)` as pieces whose concatenation it is, never
 * joined into one string: for a caller that only hashes the text
 * (invocationIdentity's long prompts). Joining a long prompt's answer is a
 * fresh allocation the size of the prompt (docs/performance.md, "A fresh
 * page costs ~16 µs on this machine"). No piece boundary falls inside a
 * surrogate pair. A normalizer of another kind, or options with caller
 * rules (which run on the whole text), give one piece: the normalized text.
 */
export function normalizedParts(prepared: PreparedNormalizer, text: string): readonly string[] {
  if (!(prepared instanceof Prepared)) return [prepared.normalize(text)];
  return prepared.parts(text);
}

function runParts(text: string, r: Resolved): readonly string[] {
  const parts: string[] = [];
  const whole = run(text, r, undefined, parts);
  return parts.length > 0 ? parts : [whole];
}

const NO_SCANNER = {};
/** scanner → roots → disabled rules → caller rules (by value) → token. */
const tokens = new WeakMap<
  object,
  WeakMap<RootMatcher, WeakMap<DisabledRules, Map<string, object>>>
>();
/** Distinct caller-rule sets remembered per (scanner, roots, rules off): a bound, not a cache size. */
const MAX_RULE_KEYS = 64;

function tokenOf(r: Resolved): object | undefined {
  let rulesKey = "";
  if (r.rules !== undefined) {
    if (!Array.isArray(r.rules)) return undefined;
    const parts: string[] = [];
    for (const rule of r.rules as readonly NormalizationRule[]) {
      if (
        rule === null ||
        typeof rule !== "object" ||
        !(rule.pattern instanceof RegExp) ||
        typeof rule.replacement !== "string" ||
        typeof rule.name !== "string"
      )
        return undefined;
      parts.push(rule.name, rule.pattern.source, rule.pattern.flags, rule.replacement);
    }
    // JSON of an array of strings: a faithful, unambiguous spelling of the list.
    rulesKey = JSON.stringify(parts);
  }
  const scannerKey = r.scanner ?? NO_SCANNER;
  let byRoots = tokens.get(scannerKey);
  if (byRoots === undefined) {
    byRoots = new WeakMap();
    tokens.set(scannerKey, byRoots);
  }
  let byOff = byRoots.get(r.roots);
  if (byOff === undefined) {
    byOff = new WeakMap();
    byRoots.set(r.roots, byOff);
  }
  let byRules = byOff.get(r.off);
  if (byRules === undefined) {
    byRules = new Map();
    byOff.set(r.off, byRules);
  }
  let token = byRules.get(rulesKey);
  if (token === undefined) {
    if (byRules.size >= MAX_RULE_KEYS) byRules.clear();
    token = {};
    byRules.set(rulesKey, token);
  }
  return token;
}

/** What an option set resolves to: everything `run` needs besides the text. */
interface Resolved {
  off: DisabledRules;
  roots: RootMatcher;
  scanner: SecretRedactor | undefined;
  rules: readonly NormalizationRule[] | undefined;
}

function checkText(text: unknown): asserts text is string {
  if (typeof text !== "string") {
    throw new TypeError(`normalizePrompt: text must be a string, got ${typeof text}`);
  }
}

/** Resolve the options, in the order their errors have always been reported. */
function resolve(opts: NormalizeOptions): Resolved {
  if (opts === null || typeof opts !== "object") {
    throw new TypeError("normalizePrompt: options must be an object");
  }
  const off = disabledRules(opts.disableRules);
  const roots = compileRoots(enabledSpellings(rootSpellings(opts as RootOptions), off));
  return { off, roots, scanner: scannerFor(opts.secrets), rules: opts.rules };
}

function explain(text: string, r: Resolved): NormalizationReport {
  const matches: RuleMatch[] = [];
  const counts: Record<string, number> = {};
  const output = run(text, r, { matches, counts });
  for (const m of matches) counts[m.rule] = (counts[m.rule] ?? 0) + 1;
  return { output, matches, counts };
}

/** What explainNormalization collects while the steps run. */
type Report = { matches: RuleMatch[]; counts: Record<string, number> };

/**
 * The table over `text`. With `parts` and no caller rules (which run on the
 * whole text), the scan's answer is pushed there in pieces and "" returned
 * (see `scan`): one sequence of steps for both, so they cannot drift apart.
 */
function run(text: string, r: Resolved, report: Report | undefined, parts?: string[]): string {
  // Secrets go first among the matching rules: a key must be removed whole
  // before a UUID or timestamp rule could cut it into pieces.
  let s = nfcStep(text, r, report);
  s = whitespaceStep(s, r, report);
  s = secretStep(s, r, report);
  if (parts !== undefined && r.rules === undefined) return scanStep(s, r, report, parts);
  s = scanStep(s, r, report);
  if (r.rules !== undefined) s = applyExtraRules(s, r.rules, report?.counts);
  return s;
}

// The table's built-in steps, in the order run() applies them. Each is also
// handed out alone by normalizationStages; a rule turned off passes its input through.

function nfcStep(s: string, r: Resolved, report: Report | undefined): string {
  if (r.off.nfc) return s;
  const out = s.normalize("NFC");
  if (report !== undefined && out !== s) report.counts["unicode-nfc"] = 1;
  return out;
}

function whitespaceStep(s: string, r: Resolved, report: Report | undefined): string {
  if (r.off.whitespace) return s;
  const out = collapseWhitespace(s);
  if (report !== undefined && out !== s) report.counts.whitespace = 1;
  return out;
}

function secretStep(s: string, r: Resolved, report: Report | undefined): string {
  if (r.scanner === undefined) return s;
  const found: { name: string }[] = [];
  const out = r.scanner.redactString(s, "$", found as never);
  if (report !== undefined && found.length > 0) report.counts.secret = found.length;
  return out;
}

/** The scan; with `parts`, its answer pushed there in pieces and "" returned (see `scan`). */
function scanStep(s: string, r: Resolved, report: Report | undefined, parts?: string[]): string {
  return scan(s, r.roots, report?.matches, r.off.scan, parts);
}

/** One step of the table: text in, text out. */
export type NormalizationStage = (text: string) => string;

/**
 * The table's built-in steps over one option set, one function each (the
 * ones `normalizePrompt` runs, in its order: each takes the previous one's
 * output). For timing the steps apart (bench/identity.bench.ts):
 * normalizePrompt's time is their sum, so a step that alone runs slower
 * than a target already puts normalizePrompt out of it. Not part of the
 * package's API; callers' extra rules are not included.
 * test/normalize/stages.test.ts checks that composing them gives
 * `normalizePrompt`'s output.
 */
export function normalizationStages(
  opts: NormalizeOptions = {},
): Record<"nfc" | "whitespace" | "secret" | "scan", NormalizationStage> {
  const r = resolve(opts);
  return {
    nfc: (s) => nfcStep(s, r, undefined),
    whitespace: (s) => whitespaceStep(s, r, undefined),
    secret: (s) => secretStep(s, r, undefined),
    scan: (s) => scanStep(s, r, undefined),
  };
}

function applyExtraRules(
  s: string,
  rules: readonly NormalizationRule[],
  counts: Record<string, number> | undefined,
): string {
  if (!Array.isArray(rules)) throw new TypeError("rules must be an array of NormalizationRule");
  rules.forEach((rule, i) => {
    if (rule === null || typeof rule !== "object" || !(rule.pattern instanceof RegExp)) {
      throw new TypeError(
        `rules[${i}].pattern must be a RegExp, e.g. { name: "ticket", pattern: /JIRA-\\d+/g, replacement: "{ticket}" }`,
      );
    }
    if (typeof rule.replacement !== "string" || typeof rule.name !== "string") {
      throw new TypeError(`rules[${i}] needs a string name and a string replacement`);
    }
    const re = rule.pattern.global
      ? rule.pattern
      : new RegExp(rule.pattern.source, `${rule.pattern.flags}g`);
    re.lastIndex = 0;
    if (counts !== undefined) {
      const n = [...s.matchAll(re)].length;
      if (n > 0) counts[rule.name] = n;
    }
    s = s.replace(re, rule.replacement);
  });
  return s;
}
