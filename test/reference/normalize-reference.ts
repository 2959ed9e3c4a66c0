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
  off: ReadonlySet<string> = new Set(),
): { re: RegExp; tokens: Map<string, string> } | undefined {
  const builtIn = ["root:project", "root:tmp", "root:home"];
  const spellings = rootSpellings(opts).filter(
    (r) => !off.has(r.rule) && !(off.has("root:<name>") && !builtIn.includes(r.rule)),
  );
  if (spellings.length === 0) return undefined;
  const tokens = new Map<string, string>();
  const alts = spellings.map((s, i) => {
    tokens.set(`r${i}`, s.token);
    return `(?<r${i}>${s.caseInsensitive ? foldCase(s.text) : escapeRe(s.text)})`;
  });
  return { re: new RegExp(`${BEFORE}(?:${alts.join("|")})${AFTER}`, "g"), tokens };
}

/**
 * The whitespace rule, line by line: a line whose first non-blank characters
 * are three or more backticks (info without a backtick) or tildes opens a
 * fence; a line of at least as many of the same character closes it. Fence
 * lines are kept right-trimmed; the text between fences collapses to single
 * spaces; each part on its own line; the end trimmed.
 */
export function referenceWhitespace(text: string): string {
  const lines = text.split(/\r\n|\r|\n/);
  const parts: string[] = [];
  let outside: string[] = [];
  let fence: { marker: string; lines: string[] } | undefined;
  const flush = () => {
    const t = outside.join(" ").replace(/\s+/g, " ").trim();
    if (t !== "") parts.push(t);
    outside = [];
  };
  for (const line of lines) {
    if (fence === undefined) {
      // `s`: the info string runs to the end of the line, U+2028 and U+2029
      // included (they are not line ends here; without the flag `.` stops
      // at them and such a line was wrongly not an opener).
      const m = /^\s*(`{3,}|~{3,})(.*)$/s.exec(line);
      if (m !== null && !(m[1]!.startsWith("`") && m[2]!.includes("`"))) {
        flush();
        fence = { marker: m[1]!, lines: [line.trimEnd()] };
      } else outside.push(line);
    } else {
      fence.lines.push(line.trimEnd());
      const c = /^\s*(`+|~+)\s*$/.exec(line);
      if (c !== null && c[1]![0] === fence.marker[0] && c[1]!.length >= fence.marker.length) {
        parts.push(fence.lines.join("\n"));
        fence = undefined;
      }
    }
  }
  if (fence !== undefined) parts.push(fence.lines.join("\n"));
  flush();
  return parts.join("\n").trimEnd();
}

/**
 * Is this timestamp candidate (a match of the rule's shape pattern) a real
 * instant with nothing continuing it? Checked with Date.UTC, independently of
 * the scanner's field arithmetic.
 */
function realTimestamp(m: string, after: string, at: number): boolean {
  const f =
    /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d)(?::(\d\d)(?:[.,]\d+)?)?([Zz]|[+-](\d\d)(?::?(\d\d))?)?$/.exec(
      m,
    );
  if (f === null) return false;
  const [y, mo, d, h, mi] = [f[1], f[2], f[3], f[4], f[5]].map(Number) as number[];
  const date = new Date(0);
  date.setUTCFullYear(y!, mo! - 1, d!);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo! - 1 || date.getUTCDate() !== d) {
    return false;
  }
  if (h! > 23 || mi! > 59 || (f[6] !== undefined && Number(f[6]) > 60)) return false;
  if (f[8] !== undefined) {
    const off = Number(f[8]) * 60 + Number(f[9] ?? 0);
    if (Number(f[9] ?? 0) > 59 || off > 14 * 60) return false;
  }
  const rest = after.slice(at);
  if (/^[0-9{}]|^[:.][0-9A-Za-z{}/\\]/.test(rest)) return false;
  return !(f[7] === undefined && /^[+-][0-9A-Za-z{}/\\]/.test(rest));
}

/** The timestamp rule: at each position, the shape pattern anchored there, kept unless real. */
function timestamps(s: string): string {
  const shape = new RegExp(pattern("timestamp").source, "y");
  let out = "";
  let i = 0;
  while (i < s.length) {
    shape.lastIndex = i;
    const m = shape.exec(s);
    if (m !== null && realTimestamp(m[0], s, i + m[0].length)) {
      out += "{timestamp}";
      i += m[0].length;
    } else {
      out += s[i];
      i++;
    }
  }
  return out;
}

/** Normalize with one regex pass per rule. */
export function referenceNormalize(text: string, opts: NormalizeOptions = {}): string {
  const off = new Set(opts.disableRules ?? []);
  let s = off.has("unicode-nfc") ? text : text.normalize("NFC");
  if (!off.has("whitespace")) s = referenceWhitespace(s);
  s = secrets(s, opts);
  const roots = rootRegex(opts, off);
  if (roots !== undefined) {
    s = s.replace(roots.re, (...args) => {
      const groups = args.at(-1) as Record<string, string | undefined>;
      const key = Object.keys(groups).find((k) => groups[k] !== undefined)!;
      return roots.tokens.get(key)!;
    });
  }
  if (!off.has("timestamp")) s = timestamps(s);
  if (!off.has("uuid")) s = s.replace(pattern("uuid"), "{uuid}");
  if (!off.has("epoch-millis")) s = s.replace(pattern("epoch-millis"), "{timestamp}");
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
  let s = secrets(referenceWhitespace(text.normalize("NFC")), opts);
  for (const r of rootSpellings(opts)) {
    const body = r.caseInsensitive ? foldCase(r.text) : escapeRe(r.text);
    s = s.replace(new RegExp(`${BEFORE}${body}${AFTER}`, "g"), r.token);
  }
  s = s.replace(pattern("timestamp"), (m, at: number, all: string) =>
    realTimestamp(m, all, at + m.length) ? "{timestamp}" : m,
  );
  s = s.replace(pattern("uuid"), "{uuid}");
  return s.replace(pattern("epoch-millis"), "{timestamp}");
}
