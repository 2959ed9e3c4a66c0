/**
 * A corpus of real-looking credentials for the secret-leak tests, the four
 * spellings they travel in, and a byte scanner that finds any of them.
 *
 * Every value is assembled at run time from deterministic noise, so no
 * key-shaped literal sits in the source (repository secret scanners would
 * flag it, and rightly). Lengths and alphabets follow each vendor's format.
 *
 * Each (shape, spelling) cell gets its own freshly generated secret, so a
 * leak found in a file names exactly the cell that leaked.
 */
import { createHash } from "node:crypto";
import { isSecretEnvName } from "../../src/secrets/index.js";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE = `${ALNUM}_-`;
const DIGITS = "0123456789";
const UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const B64 = `${ALNUM}+/`;

/**
 * `length` deterministic pseudo-random characters of `alphabet` (SHA-256 in
 * counter mode: well mixed for every alphabet size, unlike a bare LCG whose
 * low bits repeat).
 */
export function noise(length: number, seed: string, alphabet = ALNUM): string {
  let out = "";
  for (let block = 0; out.length < length; block++) {
    const bytes = createHash("sha256").update(`invocache-corpus:${seed}:${block}`).digest();
    for (const b of bytes) {
      if (out.length === length) break;
      out += alphabet[b % alphabet.length];
    }
  }
  return out;
}

const cat = (...parts: string[]) => parts.join("");

/** One credential. */
export interface CorpusSecret {
  /** What it is, e.g. `openai-project-key`. */
  shape: string;
  /** How it naturally appears in text: the key, `Bearer <token>`, a labelled AWS secret, a PEM block. */
  text: string;
  /** The secret material: what must never be found, in any spelling. */
  material: string[];
  /**
   * The environment variable a process would hold it in, or undefined when
   * the documented env rule (docs/cassettes.md, "Secrets") does not treat such
   * a variable as secret (an AWS access key *id* is an identifier, and
   * `AWS_ACCESS_KEY_ID` is deliberately not a secret name).
   */
  env: string | undefined;
  /** The env variable's value: the material, or the whole text (`DATABASE_URL`). */
  envValue: string;
}

/** `envWhole`: the env variable holds the whole text (a URL, a connection string), not just the material. */
type Maker = (seed: string) => { text: string; material?: string[]; envWhole?: boolean };

const key =
  (make: (seed: string) => string): Maker =>
  (seed) => ({ text: make(seed) });

function pem(kind: string): Maker {
  return (seed) => {
    const lines = [
      noise(64, `${seed}a`, B64),
      noise(64, `${seed}b`, B64),
      noise(44, `${seed}c`, B64),
    ];
    const begin = cat("-----BEGIN ", kind, " PRIVATE", " KEY-----");
    const end = cat("-----END ", kind, " PRIVATE", " KEY-----");
    // A prompt's line breaks become spaces when normalized: each body line is the secret.
    return { text: [begin, ...lines, end].join("\n"), material: lines };
  };
}

const jwt = (sigLength: number): Maker =>
  key((seed) =>
    cat(
      "ey",
      "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
      ".",
      "ey",
      "J",
      noise(60, `${seed}p`, URLSAFE),
      ".",
      noise(sigLength, `${seed}s`, URLSAFE),
    ),
  );

/** The shapes: name, env variable (documented rule), how to make one. */
const SHAPES: ReadonlyArray<[shape: string, env: string | undefined, make: Maker]> = [
  ["openai-legacy-key", "OPENAI_API_KEY", key((s) => cat("sk-", noise(48, s)))],
  [
    "openai-project-key",
    "OPENAI_PROJECT_API_KEY",
    key((s) => cat("sk-", "proj-", noise(156, s, URLSAFE))),
  ],
  [
    "openai-service-account-key",
    "OPENAI_SVCACCT_API_KEY",
    key((s) => cat("sk-", "svcacct-", noise(100, s, URLSAFE))),
  ],
  [
    "openai-admin-key",
    "OPENAI_ADMIN_API_KEY",
    key((s) => cat("sk-", "admin-", noise(100, s, URLSAFE))),
  ],
  [
    "anthropic-api-key",
    "ANTHROPIC_API_KEY",
    key((s) => cat("sk-", "ant-", "api03-", noise(93, s, URLSAFE), "AA")),
  ],
  [
    "anthropic-admin-key",
    "ANTHROPIC_ADMIN_API_KEY",
    key((s) => cat("sk-", "ant-", "admin01-", noise(93, s, URLSAFE), "AA")),
  ],
  ["aws-access-key-id", undefined, key((s) => cat("AK", "IA", noise(16, s, UPPER32)))],
  ["aws-sts-access-key-id", undefined, key((s) => cat("AS", "IA", noise(16, s, UPPER32)))],
  [
    "aws-secret-access-key",
    "AWS_SECRET_ACCESS_KEY",
    (s) => {
      const value = noise(40, s, B64);
      return { text: `aws_secret_access_key = ${value}`, material: [value] };
    },
  ],
  ["github-classic-token", "GITHUB_TOKEN", key((s) => cat("gh", "p_", noise(36, s)))],
  ["github-oauth-token", "GH_OAUTH_TOKEN", key((s) => cat("gh", "o_", noise(36, s)))],
  ["github-user-to-server-token", "GH_USER_TOKEN", key((s) => cat("gh", "u_", noise(36, s)))],
  ["github-server-to-server-token", "GH_APP_TOKEN", key((s) => cat("gh", "s_", noise(36, s)))],
  ["github-refresh-token", "GH_REFRESH_TOKEN", key((s) => cat("gh", "r_", noise(76, s)))],
  [
    "github-fine-grained-pat",
    "GH_PAT_TOKEN",
    key((s) => cat("github", "_pat_", noise(22, `${s}a`), "_", noise(59, `${s}b`))),
  ],
  ["google-api-key", "GOOGLE_API_KEY", key((s) => cat("AI", "za", noise(35, s, URLSAFE)))],
  [
    "slack-bot-token",
    "SLACK_BOT_TOKEN",
    key((s) =>
      cat(
        "xo",
        "xb-",
        noise(12, `${s}a`, DIGITS),
        "-",
        noise(13, `${s}b`, DIGITS),
        "-",
        noise(24, `${s}c`),
      ),
    ),
  ],
  [
    "slack-user-token",
    "SLACK_USER_TOKEN",
    key((s) =>
      cat(
        "xo",
        "xp-",
        noise(12, `${s}a`, DIGITS),
        "-",
        noise(13, `${s}b`, DIGITS),
        "-",
        noise(32, `${s}c`),
      ),
    ),
  ],
  ["stripe-live-secret-key", "STRIPE_SECRET_KEY", key((s) => cat("sk", "_live_", noise(99, s)))],
  [
    "stripe-restricted-key",
    "STRIPE_RESTRICTED_API_KEY",
    key((s) => cat("rk", "_live_", noise(99, s))),
  ],
  [
    "stripe-test-secret-key",
    "STRIPE_TEST_SECRET_KEY",
    key((s) => cat("sk", "_test_", noise(99, s))),
  ],
  ["jwt-hs256", "SESSION_TOKEN", jwt(43)],
  ["jwt-rs256", "ID_TOKEN", jwt(342)],
  [
    "bearer-opaque-token",
    "SERVICE_TOKEN",
    (s) => {
      const token = noise(48, s, `${ALNUM}._~+/`);
      return { text: `Bearer ${token}`, material: [token] };
    },
  ],
  ["pem-rsa-private-key", "TLS_PRIVATE_KEY", pem("RSA")],
  ["pem-ec-private-key", "SIGNING_PRIVATE_KEY", pem("EC")],
  ["pem-openssh-private-key", "DEPLOY_PRIVATE_KEY", pem("OPENSSH")],
  ["gitlab-pat", "GITLAB_TOKEN", key((s) => cat("gl", "pat-", noise(20, s, URLSAFE)))],
  [
    "huggingface-token",
    "HF_TOKEN",
    // 34 letters, no digit: the env rule must still take it.
    key((s) =>
      cat("hf", "_", noise(34, s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")),
    ),
  ],
  [
    "azure-storage-connection-string",
    "AZURE_STORAGE_CONNECTION_STRING",
    (s) => {
      const value = `${noise(86, s, B64)}==`;
      return {
        text: `DefaultEndpointsProtocol=https;AccountName=acct${noise(6, `${s}n`, DIGITS)};Account${"Key"}=${value};EndpointSuffix=core.windows.net`,
        material: [value],
        envWhole: true,
      };
    },
  ],
  [
    "postgres-url-password",
    "DATABASE_URL",
    (s) => {
      const pw = noise(24, s);
      return { text: `postgres://app:${pw}@db.internal:5432/app`, material: [pw], envWhole: true };
    },
  ],
  [
    "https-userinfo-password",
    "GIT_REMOTE_URL",
    (s) => {
      const pw = noise(24, s);
      return {
        text: `https://deploy:${pw}@git.example.com/org/repo.git`,
        material: [pw],
        envWhole: true,
      };
    },
  ],
];

/**
 * The shapes the default run plants (one or two per vendor family, 17 in
 * all); INVOCACHE_SECRETS_FULL=1 plants every shape (the full grid).
 */
export const SAMPLED_SHAPES: readonly string[] = [
  "openai-project-key",
  "anthropic-api-key",
  "aws-access-key-id",
  "aws-secret-access-key",
  "github-classic-token",
  "github-fine-grained-pat",
  "google-api-key",
  "slack-bot-token",
  "stripe-live-secret-key",
  "jwt-rs256",
  "bearer-opaque-token",
  "pem-rsa-private-key",
  "gitlab-pat",
  "huggingface-token",
  "azure-storage-connection-string",
  "postgres-url-password",
  "https-userinfo-password",
];

/** Names of the shapes in the corpus. */
export const SHAPE_NAMES: readonly string[] = SHAPES.map(([name]) => name);

/** How a secret is planted: the five spellings a key travels in. */
export type PlantForm = "raw" | "json" | "url" | "base64" | "basic";
export const PLANT_FORMS: readonly PlantForm[] = ["raw", "json", "url", "base64", "basic"];

/** One secret planted in one spelling. */
export interface Cell extends CorpusSecret {
  form: PlantForm;
  /** `shape/form`, e.g. `stripe-live-secret-key/url`. */
  id: string;
}

/**
 * Every (shape, form) cell, each with its own secret. `variant` gives another
 * independent set (e.g. one per store, so two stores never share a value).
 * Env names carry the form as a prefix (`URL_OPENAI_API_KEY`), which keeps
 * them secret names under the documented suffix rule.
 */
export function corpusCells(variant = "v0", shapes?: readonly string[]): Cell[] {
  const out: Cell[] = [];
  for (const [shape, env, make] of SHAPES) {
    if (shapes !== undefined && !shapes.includes(shape)) continue;
    for (const form of PLANT_FORMS) {
      const made = make(`${variant}:${shape}:${form}`);
      const cell: Cell = {
        shape,
        form,
        id: `${shape}/${form}`,
        text: made.text,
        material: made.material ?? [made.text],
        env: env === undefined ? undefined : `${form.toUpperCase()}_${env}`,
        envValue:
          made.envWhole === true || (made.material ?? [made.text]).length !== 1
            ? made.text
            : (made.material ?? [made.text])[0]!,
      };
      if (cell.env !== undefined && !isSecretEnvName(cell.env, cell.envValue)) {
        throw new Error(`corpus: ${cell.env} is not a secret name under the documented rule`);
      }
      out.push(cell);
    }
  }
  return out;
}

/**
 * `cell.text` in its cell's spelling, inside a sentence as a prompt or a
 * response would carry it:
 *
 * - raw: as is.
 * - json: inside a JSON document embedded in the text (line breaks escaped).
 * - url: URL-encoded in a query string.
 * - base64: standalone, and inside a data URL.
 * - basic: an HTTP Basic credential, base64 of `user:secret` (`user:` shifts the alignment).
 */
export function plant(cell: Cell): string {
  const t = cell.text;
  switch (cell.form) {
    case "raw":
      return `here is the credential: ${t} (do not share)`;
    case "json":
      return `config ${JSON.stringify({ credential: t, note: "from .env" })} end`;
    case "url":
      return `see https://api.example.com/v1/cb?credential=${encodeURIComponent(t)}&x=1 for details`;
    case "base64":
      return `blob ${Buffer.from(t).toString("base64")} or data:text/plain;base64,${Buffer.from(t).toString("base64url")}`;
    case "basic":
      return `curl -H "Authorization: Basic ${Buffer.from(`user:${t}`).toString("base64")}" https://api.example.com`;
  }
}

/** The value to put in an HTTP header: no line breaks (a PEM body line stands for its key). */
export function headerValue(cell: Cell): string {
  return cell.material.length === 1 && !cell.text.includes("\n") ? cell.text : cell.material[0]!;
}

/** A spelling of some secret material that would betray it in a file. */
interface Needle {
  text: Buffer;
  spelling: "raw" | "json" | "json2" | "url" | "base64";
}

/**
 * Every byte sequence that would betray `material`: raw, JSON- and doubly
 * JSON-escaped (a JSON prompt stored inside a JSON string), URL-encoded, and
 * the base64 characters fixed by the material alone at each of the three
 * byte alignments, standard and URL-safe alphabets.
 */
function needlesOf(material: string): Needle[] {
  const out = new Map<string, Needle["spelling"]>();
  const add = (text: string, spelling: Needle["spelling"]) => {
    if (text.length >= 16 && !out.has(text)) out.set(text, spelling);
  };
  const json1 = JSON.stringify(material).slice(1, -1);
  add(material, "raw");
  add(json1, "json");
  add(JSON.stringify(json1).slice(1, -1), "json2");
  add(encodeURIComponent(material), "url");
  for (let align = 0; align < 3; align++) {
    const bytes = Buffer.concat([Buffer.alloc(align), Buffer.from(material)]);
    const first = Math.ceil((8 * align) / 6);
    const end = Math.floor((8 * bytes.length) / 6);
    add(bytes.toString("base64").slice(first, end), "base64");
    add(bytes.toString("base64url").slice(first, end), "base64");
  }
  return [...out].map(([text, spelling]) => ({ text: Buffer.from(text), spelling }));
}

/** A secret found in some bytes: which cell, and how it was spelled there. */
export interface Leak {
  cell: string;
  spelling: string;
}

/** Needles are indexed by their first bytes: one pass over a haystack, whatever the corpus size. */
const PREFIX = 12;

/** Scans bytes for any spelling of any secret of `cells`. */
export class LeakScanner {
  readonly #byPrefix = new Map<string, Array<{ cell: string; needle: Needle }>>();

  constructor(cells: readonly Cell[]) {
    for (const c of cells) {
      for (const m of c.material) {
        for (const needle of needlesOf(m)) {
          const key = needle.text.subarray(0, PREFIX).toString("latin1");
          const list = this.#byPrefix.get(key) ?? [];
          list.push({ cell: c.id, needle });
          this.#byPrefix.set(key, list);
        }
      }
    }
  }

  /** Every (cell, spelling) found in `haystack`, once each. */
  scan(haystack: Buffer | string): Leak[] {
    const bytes = typeof haystack === "string" ? Buffer.from(haystack) : haystack;
    // latin1: one character per byte, so string offsets are byte offsets.
    const text = bytes.toString("latin1");
    const seen = new Set<string>();
    const out: Leak[] = [];
    for (let i = 0; i + PREFIX <= text.length; i++) {
      const candidates = this.#byPrefix.get(text.slice(i, i + PREFIX));
      if (candidates === undefined) continue;
      for (const { cell, needle } of candidates) {
        const k = `${cell}|${needle.spelling}`;
        if (seen.has(k) || !bytes.subarray(i, i + needle.text.length).equals(needle.text)) continue;
        seen.add(k);
        out.push({ cell, spelling: needle.spelling });
      }
    }
    return out;
  }
}

/** The environment of a process that holds every env-named secret of `cells`. */
export function corpusEnv(cells: readonly Cell[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const c of cells) {
    if (c.env !== undefined) env[c.env] = c.envValue;
  }
  return env;
}

/** `leaks` as readable lines, grouped by cell: `stripe-live-secret-key/raw (raw)`. */
export function describeLeaks(leaks: readonly Leak[]): string[] {
  const by = new Map<string, Set<string>>();
  for (const l of leaks) by.set(l.cell, (by.get(l.cell) ?? new Set()).add(l.spelling));
  return [...by].map(([cell, spellings]) => `${cell} (as ${[...spellings].join(", ")})`).sort();
}
