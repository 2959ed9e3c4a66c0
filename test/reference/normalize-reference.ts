/**
 * A second, independent statement of the normalization table: one regular
 * expression per rule, applied in table order. It is the oracle the scanner is
 * compared with (property tests) and the "naive" baseline of `npm run bench`.
 * Deliberately simple and slow; never used by the library.
 */
import { NORMALIZATION_RULES, type NormalizeOptions } from "../../src/normalize/index.js";
import { rootSpellings } from "../../src/normalize/roots.js";
import { scannerFor } from "../../src/normalize/secrets-rule.js";

/** The secret rule is one implementation (src/secrets), shared by both normalizers. */
function secrets(s: string, opts: NormalizeOptions): string {
  const scanner = scannerFor(opts.secrets);
  return scanner === undefined ? s : scanner.redactString(s, "$", []);
}

const NAME = "A-Za-z0-9_.~+@{}\\-\\u0080-\\uffff";
const BEFORE = `(?:(?<=:\\/\\/)|(?<=:\\/\\/\\/)|(?<![${NAME}\\/\\\\]))`;
const AFTER = `(?=$|[\\/\\\\]|\\.(?:$|[^${NAME}\\/\\\\])|[^${NAME}])`;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
const foldCase = (s: string) =>
  escapeRe(s).replace(/[A-Za-z]/g, (c) => `[${c.toUpperCase()}${c.toLowerCase()}]`);

function pattern(name: string): RegExp {
  const rule = NORMALIZATION_RULES.find((r) => r.name === name);
  if (rule?.pattern === undefined) throw new Error(`no pattern for ${name}`);
  return new RegExp(rule.pattern.source, "g");
}

/** The root rule as one alternation, longest spelling first (as the table says). */
export function rootRegex(
  opts: NormalizeOptions,
): { re: RegExp; tokens: Map<string, string> } | undefined {
  const spellings = rootSpellings(opts);
  if (spellings.length === 0) return undefined;
  const tokens = new Map<string, string>();
  const alts = spellings.map((s, i) => {
    tokens.set(`r${i}`, s.token);
    return `(?<r${i}>${s.caseInsensitive ? foldCase(s.text) : escapeRe(s.text)})`;
  });
  return { re: new RegExp(`${BEFORE}(?:${alts.join("|")})${AFTER}`, "g"), tokens };
}

/** Normalize with one regex pass per rule. */
export function referenceNormalize(text: string, opts: NormalizeOptions = {}): string {
  let s = secrets(text.normalize("NFC").replace(/\s+/g, " ").trim(), opts);
  const roots = rootRegex(opts);
  if (roots !== undefined) {
    s = s.replace(roots.re, (...args) => {
      const groups = args.at(-1) as Record<string, string | undefined>;
      const key = Object.keys(groups).find((k) => groups[k] !== undefined)!;
      return roots.tokens.get(key)!;
    });
  }
  s = s.replace(pattern("timestamp"), "{timestamp}");
  s = s.replace(pattern("uuid"), "{uuid}");
  s = s.replace(pattern("epoch-millis"), "{timestamp}");
  for (const rule of opts.rules ?? []) {
    s = s.replace(
      new RegExp(rule.pattern!.source, `${rule.pattern!.flags.replace("g", "")}g`),
      rule.replacement,
    );
  }
  return s;
}

/**
 * The most naive normalizer a team would write first: every root spelling,
 * every rule, its own global regex pass (no shared scan). The bench baseline.
 */
export function naiveNormalize(text: string, opts: NormalizeOptions = {}): string {
  let s = secrets(text.normalize("NFC").replace(/\s+/g, " ").trim(), opts);
  for (const r of rootSpellings(opts)) {
    const body = r.caseInsensitive ? foldCase(r.text) : escapeRe(r.text);
    s = s.replace(new RegExp(`${BEFORE}${body}${AFTER}`, "g"), r.token);
  }
  s = s.replace(pattern("timestamp"), "{timestamp}");
  s = s.replace(pattern("uuid"), "{uuid}");
  return s.replace(pattern("epoch-millis"), "{timestamp}");
}
