/**
 * Known key shapes, as data: secrets that are recognisable without knowing
 * the environment (a key pasted into a prompt, a token echoed in a response).
 *
 * Linear time on any input, like the normalization rules: every pattern is a
 * literal anchor followed by character classes with single quantifiers, never
 * a quantified group (no nested quantifiers), so V8's backtracking costs at
 * most the length of one class run per anchor occurrence. Shape checks that a
 * regex would need nesting for (a JWT's three dot-separated parts) run in
 * `accept` on the match instead. test/secrets/linear-time.test.ts guards both.
 */

/** One key shape. */
export interface SecretPattern {
  /** Placeholder name: lower-case words with dashes, never a valid env var name. */
  readonly name: string;
  /** Global regex. Without `group` the whole match is the secret. */
  readonly regex: RegExp;
  /** Capture group holding the secret; the rest of the match (`Bearer `) stays. */
  readonly group?: number;
  /**
   * Checks a regex cannot make in linear time. Returns the part of the
   * secret text to redact (a prefix of it; the rest is kept), or undefined to
   * leave the match alone.
   */
  readonly refine?: (secret: string) => string | undefined;
  /** What it catches, for docs. */
  readonly description: string;
}

// Real keys are random: a run of letters or dashes alone is a word ("task-management-…").
const random = (s: string) => (/[0-9]/.test(s) && /[A-Za-z]/.test(s) ? s : undefined);

// The body class also matches the END line and any prose after it: cut there.
function pemBlock(s: string): string {
  const end = s.indexOf("-----END");
  if (end < 0) return s;
  const close = s.indexOf("-----", end + 8);
  return close < 0 ? s.slice(0, end) : s.slice(0, close + 5);
}

// Three or more dot-separated parts, the second a JSON object too; a sentence's final "." is not part of it.
function jwt(s: string): string | undefined {
  let end = s.length;
  while (end > 0 && s[end - 1] === ".") end--; // a loop, not /\.+$/: that regex is quadratic on dot runs
  const token = s.slice(0, end);
  const parts = token.split(".");
  return parts.length >= 3 && parts[1]!.startsWith("eyJ") && parts.every((p) => p !== "")
    ? token
    : undefined;
}

/**
 * The shapes searched for, in order (more specific first: `sk-ant-` before `sk-`).
 *
 * @example
 * SECRET_PATTERNS.map((p) => p.name) // ["private-key", "anthropic-api-key", "openai-api-key", …]
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    name: "private-key",
    regex: /-----BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY-----[A-Za-z0-9+/=\s:,-]{16,16384}/g,
    refine: pemBlock,
    description: "PEM private key block (header and body)",
  },
  {
    name: "anthropic-api-key",
    regex: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g,
    description: "Anthropic API key `sk-ant-…`",
  },
  {
    name: "openai-api-key",
    regex: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g,
    refine: random,
    description: "OpenAI API key `sk-…`, `sk-proj-…`, `sk-svcacct-…`",
  },
  {
    name: "github-token",
    regex: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}/g,
    description: "GitHub token `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`",
  },
  {
    name: "github-pat",
    regex: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}/g,
    description: "GitHub fine-grained token `github_pat_…`",
  },
  {
    name: "google-api-key",
    regex: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}/g,
    description: "Google API key `AIza…`",
  },
  {
    name: "slack-token",
    regex: /(?<![A-Za-z0-9_-])xox[abprs]-[A-Za-z0-9-]{10,}/g,
    refine: random,
    description: "Slack token `xoxb-…`, `xoxp-…`, `xoxa-…`, `xoxs-…`, `xoxr-…`",
  },
  {
    name: "aws-access-key-id",
    regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    description: "AWS access key id `AKIA…` / `ASIA…`",
  },
  {
    name: "aws-secret-access-key",
    regex:
      /(secret_?access_?key["']?[ \t]{0,4}[:=][ \t]{0,4}["']?)([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    group: 2,
    description: "AWS secret access key after `aws_secret_access_key =` / `SecretAccessKey:`",
  },
  {
    name: "stripe-api-key",
    regex: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
    description: "Stripe secret and restricted keys `sk_live_…`, `rk_live_…`, `sk_test_…`",
  },
  {
    name: "bearer-token",
    regex: /([Bb]earer[ \t]{1,4})([A-Za-z0-9._~+/-]{16,}=*)/g,
    group: 2,
    refine: random,
    description: "the token after `Bearer ` (Authorization headers)",
  },
  {
    name: "json-web-token",
    regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_.-]{20,}/g,
    refine: jwt,
    description: "JSON Web Token `eyJ….eyJ….…`",
  },
];

/**
 * A quick test that every match of {@link SECRET_PATTERNS} passes: each
 * pattern's match contains one of these anchors. Text without any (most
 * prompts) skips the patterns, one native scan instead of one per pattern.
 * test/secrets checks it against every pattern on the fake-key corpus.
 *
 * @example
 * SECRET_ANCHORS.test("plain prose") // false: no pattern can match
 */
export const SECRET_ANCHORS =
  /-----BEGIN |sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|AIza|xox[abprs]-|AKIA|ASIA|[Ss][Ee][Cc][Rr][Ee][Tt]_?[Aa][Cc][Cc][Ee][Ss][Ss]|[Bb]earer[ \t]|eyJ/;
