/**
 * The normalization rule table, as data. It is the one reviewable statement of
 * what invocache considers "noise" in a prompt; everything not listed here is
 * kept, because a cache that hits when it should not hides regressions.
 *
 * The built-in rules are applied by a single linear-time scanner
 * (`scanner.ts`); each carries the regular expression that states it, which
 * the test suite uses as an independent oracle and `docs/normalization.md`
 * renders. Extra rules passed by the caller are applied after the table, in
 * order, with `String.prototype.replace`.
 */

/** One row of the normalization table. */
export interface NormalizationRule {
  /** Stable name, shown by `invocache normalize --explain` and in miss reports. */
  name: string;
  /**
   * What it replaces. Built-in rules that depend on the machine (roots) carry
   * no pattern: theirs is built from the resolved root spellings.
   * A caller's rule must have one; it is applied with the `g` flag.
   */
  pattern?: RegExp;
  /** The replacement text (for caller rules, `$1`-style references work). */
  replacement: string;
  /** One sentence for humans. */
  description?: string;
  /** A worked example, rendered in docs and checked by the tests. */
  example?: { input: string; output: string };
}

/**
 * Version of the built-in table. Bump it whenever a rule's behaviour changes:
 * it is stored with every recorded entry so a cache built under an older table
 * can be told apart.
 */
export const NORMALIZATION_VERSION = 2;

/**
 * Characters that continue a path component. A root only matches when the
 * character after it is not one of these (so `/home/u` never matches
 * `/home/u2` or `/home/u-old`) and the character before it is not one of
 * these nor a separator. Any non-ASCII character counts as a name character:
 * when in doubt we keep the text.
 */
export const PATH_NAME_CHAR = /[A-Za-z0-9_.~+@{}\-\u0080-\uffff]/;

const HEX = "[0-9A-Fa-f]";
// No rule fires directly next to `{` or `}`: replacement tokens are braced,
// so this keeps normalization idempotent (see root-matcher.ts, BRACE).
const ALNUM_BEFORE = "(?<![0-9A-Za-z{}])";
const ALNUM_AFTER = "(?![0-9A-Za-z{}])";

/**
 * Dashed 8-4-4-4-12 UUIDs (any case, any version) and bare 32-hex ids that
 * are UUIDs by RFC 9562 section 4: version nibble 1-8 (hex digit 13), variant
 * bits 10xx (hex digit 17 is 8, 9, a or b), at least one letter (a 32-digit
 * integer is a number). MD5 digests, AES-128 keys in hex and other 32-hex
 * values fail that test 7 times in 8 and are kept.
 */
const UUID_PATTERN = new RegExp(
  `${ALNUM_BEFORE}(?:${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}|(?![0-9]{32})${HEX}{12}[1-8]${HEX}{3}[89ABab]${HEX}{15})${ALNUM_AFTER}`,
  "g",
);

/**
 * ISO-8601 / RFC 3339 datetimes: a date, `T`, `t` or one space, hours and
 * minutes, optional seconds with an optional fraction, optional zone. Date-only
 * text is kept (it is usually meaningful: "due 2026-09-09"). The pattern gives
 * the shape; a candidate is templated only when its fields are a real instant
 * (see `datetime.ts`: month 01-12, day within the month with Gregorian leap
 * years, hour 00-23, minute 00-59, second 00-60, zone offset at most 14:00
 * with minutes 00-59) and nothing that continues it follows (a digit or a
 * brace; `:` or `.`, or `+`/`-` when no zone was read, before a letter, digit,
 * brace or path separator). Otherwise the whole candidate is kept: a
 * half-templated datetime would leave a fragment (`+05:60` → `{timestamp}:60`).
 */
const TIMESTAMP_PATTERN =
  /(?<![0-9{}])[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?/g;

/**
 * 13-digit epoch milliseconds from 1000000000000 to 3999999999999
 * (2001-09-09T01:46:40Z to 2096-10-02T07:06:39Z), standing alone: not inside
 * a longer digit or hex run, not after `+` (an E.164 phone number), not
 * after `x` or `.` that follows a digit or a token (`0x…` hex, the fraction
 * of a decimal). ISBN-13 and EAN-13 codes start with 4-9 and fall outside.
 */
const EPOCH_MILLIS_PATTERN = /(?<![0-9A-Fa-f{}+]|[0-9}][xX.])[1-3][0-9]{12}(?![0-9A-Fa-f{}])/g;

/**
 * The built-in table, in application order.
 *
 * Deliberate choices of order, so the result is the same as applying each
 * row's pattern in turn (the tests check this against such a reference):
 * - secrets are removed before roots, timestamps and UUIDs can split a key;
 * - whitespace is collapsed first, which makes the function idempotent: a
 *   timestamp split by a newline, or a root containing a space, would
 *   otherwise only match on a second pass;
 * - timestamps come before UUIDs, so 32 digits of fractional seconds are part
 *   of the timestamp, not a UUID inside it.
 */
export const NORMALIZATION_RULES: readonly NormalizationRule[] = Object.freeze([
  {
    name: "unicode-nfc",
    replacement: "",
    description:
      "Unicode text is put in normalization form C, so a composed and a decomposed é are the same prompt.",
    example: { input: "cafe\u0301", output: "café" },
  },
  {
    name: "whitespace",
    pattern: /\s+/g,
    replacement: " ",
    description:
      "Outside fenced code blocks, every run of whitespace (spaces, tabs, newlines, CR, Unicode spaces) becomes one space; inside ``` or ~~~ fences lines and indentation are kept (CRLF becomes LF, trailing blanks go); both ends are trimmed.",
    example: { input: "  Plan\r\n\tthe   work \n", output: "Plan the work" },
  },
  {
    name: "secret",
    replacement: "{secret:NAME}",
    description:
      "Values of secret environment variables (*_API_KEY, *_TOKEN, *_SECRET, AUTHORIZATION…, also JSON-, URL- and base64-encoded) and known key shapes (sk-…, sk-ant-…, ghp_…, AKIA…, JWTs, Bearer tokens…) become {secret:NAME}, so no key is ever hashed, stored or shown.",
    example: {
      input: "call with key sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2",
      output: "call with key {secret:openai-api-key}",
    },
  },
  {
    name: "root:project",
    replacement: "{project}",
    description:
      "The project path (as given, resolved, and its real path) becomes {project}; the subpath after it is kept.",
    example: { input: "edit /work/run-7/src/a.ts", output: "edit {project}/src/a.ts" },
  },
  {
    name: "root:tmp",
    replacement: "{tmp}",
    description:
      "Temporary directories (os.tmpdir(), /tmp, their real paths and macOS /private forms) become {tmp}.",
    example: { input: "wrote /tmp/out.json", output: "wrote {tmp}/out.json" },
  },
  {
    name: "root:home",
    replacement: "{home}",
    description: "The home directory becomes {home}, only on a path boundary.",
    example: { input: "read /home/alice/.npmrc", output: "read {home}/.npmrc" },
  },
  {
    name: "root:<name>",
    replacement: "{<name>}",
    description:
      "Each extra root passed in `roots` becomes {name}. Longest spelling wins across all roots.",
    example: { input: "cache in /var/cache/ci/x", output: "cache in {cache}/x" },
  },
  {
    name: "timestamp",
    pattern: TIMESTAMP_PATTERN,
    replacement: "{timestamp}",
    description:
      "ISO-8601 datetimes (with T or a space, optional seconds, fraction and zone) whose fields are a real instant become {timestamp}; impossible ones (Feb 30, 24:59, +05:60) are kept whole, and so is a date alone.",
    example: {
      input: "at 2026-09-09T14:33:21.5+00:00 due 2026-09-10",
      output: "at {timestamp} due 2026-09-10",
    },
  },
  {
    name: "uuid",
    pattern: UUID_PATTERN,
    replacement: "{uuid}",
    description:
      "UUIDs become {uuid}: dashed 8-4-4-4-12 (any case, any version), or 32 hex digits whose RFC 9562 version (1-8) and variant (10xx) nibbles say UUID; MD5 digests, hex keys, 32-digit numbers, 40-hex git shas and 64-hex digests are kept.",
    example: {
      input: "session 3F2504E0-4F89-11D3-9A0C-0305E82C3301 ok",
      output: "session {uuid} ok",
    },
  },
  {
    name: "epoch-millis",
    pattern: EPOCH_MILLIS_PATTERN,
    replacement: "{timestamp}",
    description:
      "Standalone 13-digit epoch milliseconds from 2001-09-09 to 2096-10-02 become {timestamp}, in names like run-1757428401123 too; ISBN/EAN-13 codes, +phone numbers, 0x hex, decimal fractions, 10-digit seconds and other numbers are kept.",
    example: { input: "ts=1767225600000 n=1767225600", output: "ts={timestamp} n=1767225600" },
  },
]);
