/**
 * Known key shapes, as data: secrets that are recognisable without knowing
 * the environment (a key pasted into a prompt, a token echoed in a response).
 *
 * Where the shapes come from: gitleaks' default rule set (config/gitleaks.toml,
 * MIT licence, Copyright (c) 2019 Zachary Rice), the de-facto standard list.
 * Each pattern names the gitleaks rule it follows (`gitleaks`); the regexes
 * are rewritten for V8 rather than copied, because gitleaks' RE2 regexes are
 * linear by construction and V8's are not: ours keep the prefixes, alphabets
 * and lengths, and add the shapes gitleaks leaves to its generic rule (URL
 * userinfo passwords, connection-string fields, PEM bodies inside escaped
 * JSON). Why not secretlint as a library: its API is asynchronous (the
 * identity is computed synchronously), and its recommended preset misses
 * GitLab, Hugging Face, Azure storage and OpenAI project keys (see
 * docs/cassettes.md, "Secrets").
 *
 * Linear time on any input, at any size: every pattern is a literal anchor
 * followed by character classes with single, BOUNDED quantifiers (an
 * unbounded `[…]{20,}` on a 5.6 M-character run exhausts V8's backtrack
 * stack: RangeError), never a quantified group. A token longer than the
 * bound is not cut: the scanner extends the match over `extend` characters
 * with a plain loop (redact.ts). Shape checks a regex would need nesting for
 * run in `refine`. test/secrets/linear-time.test.ts and huge-input.test.ts
 * guard both.
 */

/** One key shape. */
export interface SecretPattern {
  /** Placeholder name: lower-case words with dashes, never a valid env var name. */
  readonly name: string;
  /** Global regex. Without `group` the whole match is the secret. */
  readonly regex: RegExp;
  /** Capture group holding the secret; the rest of the match (`Bearer `) stays. It must end the match. */
  readonly group?: number;
  /**
   * Characters the secret continues with past the regex's length bound: the
   * scanner extends the match over them, so a token is redacted whole.
   */
  readonly extend?: RegExp;
  /**
   * Checks a regex cannot make in linear time. Returns the part of the
   * secret text to redact (a prefix of it; the rest is kept), or undefined to
   * leave the match alone.
   */
  readonly refine?: (secret: string) => string | undefined;
  /** The gitleaks rule id it follows, when there is one. */
  readonly gitleaks?: string;
  /** What it catches, for docs. */
  readonly description: string;
}

/** Longest token the regexes take in one match; longer ones are extended by a loop. */
export const MAX_TOKEN_MATCH = 4096;

/**
 * Real keys are random; words joined by dashes are not ("sk-learn-classification-
 * tutorial-part-2024", "tokens2024-issued-by-the-idp"). Random means one run
 * between separators of 12 or more characters mixing letters with digits or
 * both cases.
 */
export function looksRandom(s: string): boolean {
  let start = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 45;
    // Separators between words: - _ . (base64's + / = are part of random text)
    if (c === 45 || c === 95 || c === 46) {
      if (i - start >= 12 && mixed(s.slice(start, i))) return true;
      start = i + 1;
    }
  }
  return false;
}

function mixed(run: string): boolean {
  const digit = /[0-9]/.test(run);
  const lower = /[a-z]/.test(run);
  const upper = /[A-Z]/.test(run);
  return (digit && (lower || upper)) || (lower && upper);
}

const random = (s: string) => (looksRandom(s) ? s : undefined);

// A placeholder already written (a second pass over redacted text) is not a secret.
const notPlaceholder = (s: string) => (s.startsWith("{secret:") || s === "" ? undefined : s);

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

const ALNUM = /[A-Za-z0-9]/;

const AWS_SECRET = /^[A-Za-z0-9/+]{40}$/;
const AWS_SECRET_FIRST = /^[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/;
const BASE64_TEXT = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * What to redact of the value after an AWS secret label: all of it when it
 * spells an AWS secret (40 characters of the base64 alphabet) in base64
 * (standard or URL-safe, padded or not) or percent-encoding (a `/` or `+`
 * becomes `%2F`, `%2B`); else the secret it starts with, raw (a `-old` or
 * `_2` after it is kept, as before). Anything else is left alone. The whole
 * value is tried first, so a spelling is never cut after its 40th character.
 */
function awsSecret(value: string): string | undefined {
  if (BASE64_TEXT.test(value) && !AWS_SECRET.test(value)) {
    const alphabet = value.includes("-") || value.includes("_") ? "base64url" : "base64";
    const decoded = Buffer.from(value, alphabet);
    if (decoded.length === 40 && AWS_SECRET.test(decoded.toString("latin1"))) return value;
  }
  if (value.includes("%")) {
    try {
      if (AWS_SECRET.test(decodeURIComponent(value))) return value;
    } catch {
      // a malformed escape: not a percent spelling
    }
  }
  return AWS_SECRET_FIRST.exec(value)?.[0];
}

/**
 * A prefixed token: `prefix` then `min`+ characters of `cls` (a class body),
 * not preceded by a token character. Most vendor keys are this shape.
 */
function prefixed(
  name: string,
  prefix: string,
  cls: string,
  min: number,
  gitleaks: string | undefined,
  description: string,
  refine?: (s: string) => string | undefined,
): SecretPattern {
  const p = prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return {
    name,
    regex: new RegExp(`(?<![A-Za-z0-9_-])${p}[${cls}]{${min},${MAX_TOKEN_MATCH}}`, "g"),
    extend: new RegExp(`[${cls}]`),
    ...(refine === undefined ? {} : { refine }),
    ...(gitleaks === undefined ? {} : { gitleaks }),
    description,
  };
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
    // The body class takes backslashes too: a PEM inside JSON (once or twice escaped) has `\n`, `\\n`.
    regex: /-----BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY-----[A-Za-z0-9+/=\s:,\\-]{16,16384}/g,
    extend: /[A-Za-z0-9+/=\s:,\\-]/,
    refine: pemBlock,
    gitleaks: "private-key",
    description: "PEM private key block (header and body), raw or inside escaped JSON",
  },
  prefixed(
    "anthropic-api-key",
    "sk-ant-",
    "A-Za-z0-9_-",
    20,
    "anthropic-api-key",
    "Anthropic API key `sk-ant-…`",
  ),
  prefixed(
    "openai-api-key",
    "sk-",
    "A-Za-z0-9_-",
    20,
    "openai-api-key",
    "OpenAI API key `sk-…`, `sk-proj-…`, `sk-svcacct-…` (random, not `sk-learn-…` words)",
    random,
  ),
  {
    name: "github-token",
    regex: new RegExp(`(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,${MAX_TOKEN_MATCH}}`, "g"),
    extend: ALNUM,
    gitleaks: "github-pat",
    description: "GitHub token `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`",
  },
  prefixed(
    "github-pat",
    "github_pat_",
    "A-Za-z0-9_",
    22,
    "github-fine-grained-pat",
    "GitHub fine-grained token `github_pat_…`",
  ),
  {
    name: "gitlab-token",
    regex: new RegExp(
      `(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|ffct)-[A-Za-z0-9_.-]{20,${MAX_TOKEN_MATCH}}`,
      "g",
    ),
    extend: /[A-Za-z0-9_.-]/,
    refine: (s) => {
      let end = s.length;
      while (end > 0 && s[end - 1] === ".") end--;
      return s.slice(0, end);
    },
    gitleaks: "gitlab-pat",
    description:
      "GitLab tokens `glpat-…` (also routable `glpat-….01.…`), `gldt-`, `glrt-`, `glptt-`…",
  },
  {
    name: "huggingface-token",
    regex: /(?<![A-Za-z0-9_-])(?:hf_|api_org_)[A-Za-z]{34}(?![A-Za-z0-9_-])/g,
    gitleaks: "huggingface-access-token",
    description: "Hugging Face token `hf_…` (34 letters, no digits) and org token `api_org_…`",
  },
  prefixed("google-api-key", "AIza", "0-9A-Za-z_-", 35, "gcp-api-key", "Google API key `AIza…`"),
  prefixed(
    "slack-token",
    "xox",
    "A-Za-z0-9-",
    12,
    "slack-bot-token",
    "Slack token `xoxb-…`, `xoxp-…`, `xoxa-…`, `xoxe-…`, `xoxs-…`, `xoxr-…`",
    (s) => (/^xox[abeprs]-/.test(s) && looksRandom(s.slice(5)) ? s : undefined),
  ),
  {
    name: "aws-access-key-id",
    regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    gitleaks: "aws-access-token",
    description: "AWS access key id `AKIA…` / `ASIA…`",
  },
  {
    name: "aws-secret-access-key",
    // The value in any spelling (raw, base64, URL-safe base64, percent-encoded): gitleaks
    // flags a spelled one with its generic rule only, which invocache does not adopt
    // (docs/cassettes.md, "How far the generic rule goes"); `awsSecret` decodes it.
    regex:
      /(secret_?access_?key["']?[ \t]{0,4}[:=][ \t]{0,4}["']?)([A-Za-z0-9/+%_=-]{40,120})(?![A-Za-z0-9/+%_=-])/gi,
    group: 2,
    refine: awsSecret,
    description:
      "AWS secret access key after `aws_secret_access_key =` / `SecretAccessKey:`, raw, base64- or percent-encoded",
  },
  prefixed(
    "stripe-api-key",
    "sk_live_",
    "A-Za-z0-9",
    16,
    "stripe-access-token",
    "Stripe secret key `sk_live_…`",
  ),
  prefixed(
    "stripe-api-key",
    "sk_test_",
    "A-Za-z0-9",
    16,
    "stripe-access-token",
    "Stripe `sk_test_…`",
  ),
  prefixed(
    "stripe-api-key",
    "rk_live_",
    "A-Za-z0-9",
    16,
    "stripe-access-token",
    "Stripe `rk_live_…`",
  ),
  prefixed(
    "stripe-api-key",
    "rk_test_",
    "A-Za-z0-9",
    16,
    "stripe-access-token",
    "Stripe `rk_test_…`",
  ),
  prefixed("npm-token", "npm_", "A-Za-z0-9", 36, "npm-access-token", "npm access token `npm_…`"),
  prefixed(
    "pypi-token",
    "pypi-AgEIcHlwaS5vcmc",
    "A-Za-z0-9_-",
    50,
    "pypi-upload-token",
    "PyPI upload token `pypi-AgEIcHlwaS5vcmc…`",
  ),
  {
    name: "sendgrid-api-key",
    regex: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/g,
    gitleaks: "sendgrid-api-token",
    description: "SendGrid API key `SG.….…`",
  },
  prefixed(
    "digitalocean-token",
    "dop_v1_",
    "a-f0-9",
    64,
    "digitalocean-pat",
    "DigitalOcean token `dop_v1_…`",
  ),
  prefixed("groq-api-key", "gsk_", "A-Za-z0-9", 52, undefined, "Groq API key `gsk_…`"),
  prefixed("xai-api-key", "xai-", "A-Za-z0-9_", 80, undefined, "xAI API key `xai-…`"),
  prefixed(
    "perplexity-api-key",
    "pplx-",
    "A-Za-z0-9",
    48,
    "perplexity-api-key",
    "Perplexity `pplx-…`",
  ),
  prefixed(
    "google-oauth-token",
    "ya29.",
    "A-Za-z0-9_-",
    30,
    "gcp-oauth-access-token",
    "Google OAuth access token `ya29.…`",
    random,
  ),
  prefixed(
    "google-oauth-secret",
    "GOCSPX-",
    "A-Za-z0-9_-",
    28,
    "gcp-client-secret",
    "Google OAuth client secret `GOCSPX-…`",
  ),
  prefixed(
    "atlassian-token",
    "ATATT3",
    "A-Za-z0-9_=-",
    100,
    "atlassian-api-token",
    "Atlassian API token `ATATT3…`",
  ),
  prefixed("linear-api-key", "lin_api_", "A-Za-z0-9", 40, "linear-api-key", "Linear `lin_api_…`"),
  prefixed("shopify-token", "shpat_", "a-fA-F0-9", 32, "shopify-access-token", "Shopify `shpat_…`"),
  prefixed(
    "shopify-token",
    "shpss_",
    "a-fA-F0-9",
    32,
    "shopify-shared-secret",
    "Shopify `shpss_…`",
  ),
  prefixed("databricks-token", "dapi", "a-f0-9", 32, "databricks-api-token", "Databricks `dapi…`"),
  {
    name: "azure-storage-key",
    // Connection strings of Azure Storage / Service Bus / Event Hubs / SignalR.
    regex:
      /((?<![A-Za-z0-9_])(?:AccountKey|SharedAccessKey|AccessKey)=)([A-Za-z0-9+/]{20,200}={0,2})/gi,
    group: 2,
    refine: random,
    gitleaks: "azure-ad-client-secret",
    description: "Azure connection-string keys `AccountKey=…`, `SharedAccessKey=…`",
  },
  {
    name: "connection-string-password",
    // `Password=…;` in ADO/JDBC/ODBC strings; `_PASSWORD=` (env files) is left to the env rule.
    regex:
      /((?<![A-Za-z0-9_])(?:Password|Pwd|SharedAccessSignature)[ \t]{0,2}=[ \t]{0,2})([^;\s"'<>&{}]{1,512})/gi,
    group: 2,
    refine: notPlaceholder,
    description: "`Password=…` / `Pwd=…` fields of connection strings",
  },
  {
    name: "url-password",
    // scheme://user:password@host — the password (percent-encoded `@` stays inside it).
    regex: /(:\/\/[^\s/?#@:"'<>{}]{0,128}:)([^\s/?#@"'<>{}]{1,256})(?=@)/g,
    group: 2,
    refine: notPlaceholder,
    description: "password in URL userinfo `postgres://user:pass@…`, `https://user:pass@…`",
  },
  {
    name: "basic-auth",
    regex: /((?<![A-Za-z0-9_-])Basic[ \t]{1,4})([A-Za-z0-9+/]{8,4096}={0,2})/g,
    group: 2,
    extend: /[A-Za-z0-9+/=]/,
    refine: (s) => {
      const decoded = Buffer.from(s, "base64").toString("utf8");
      return decoded.includes(":") && decoded.isWellFormed() && !decoded.includes("\uFFFD")
        ? s
        : undefined;
    },
    description: "the credentials after `Basic ` (base64 of `user:secret`)",
  },
  {
    name: "bearer-token",
    regex: new RegExp(
      `([Bb]earer[ \\t]{1,4})([A-Za-z0-9._~+/-]{16,${MAX_TOKEN_MATCH}}={0,2})`,
      "g",
    ),
    group: 2,
    extend: /[A-Za-z0-9._~+/=-]/,
    refine: random,
    description: "the token after `Bearer ` (Authorization headers); words are left alone",
  },
  {
    name: "json-web-token",
    regex: new RegExp(`(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_.-]{20,${MAX_TOKEN_MATCH}}`, "g"),
    extend: /[A-Za-z0-9_.-]/,
    refine: jwt,
    gitleaks: "jwt",
    description: "JSON Web Token `eyJ….eyJ….…`",
  },
];

/**
 * A quick test that every match of {@link SECRET_PATTERNS} passes: each
 * pattern's match contains one of these anchors (case-insensitive, so it
 * may say yes more often than needed, never less). Text without any (most
 * prompts) skips the patterns, one native scan instead of one per pattern.
 * test/secrets checks it against every pattern on the fake-key corpus.
 *
 * @example
 * SECRET_ANCHORS.test("plain prose") // false: no pattern can match
 */
export const SECRET_ANCHORS =
  /-----BEGIN |sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|hf_|api_org_|AIza|xox[abeprs]-|A[SBKC][IC]A|secret_?access|Bearer[ \t]|Basic[ \t]|eyJ|npm_|pypi-|SG\.|dop_v1_|gsk_|xai-|pplx-|ya29\.|GOCSPX-|ATATT3|lin_api_|shp[as][ts]_|dapi|key=|pwd|password|signature|:\/\//i;
