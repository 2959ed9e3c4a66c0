/**
 * How far the generic rule goes, decided with gitleaks' own figures.
 *
 * The independent scanners' corpus still found one shape on disk: a
 * labelled AWS secret whose value is spelled (`aws_secret_access_key =
 * <base64>`), which only gitleaks' `generic-api-key` rule flags. That rule
 * (keyword, assignment, a 10–150-character value or a base64 run, Shannon
 * entropy ≥ 3.5; reproduced here as the reference, GITLEAKS_GENERIC) is
 * tuned for humans triaging findings. Here a finding is redacted inside the
 * identity, so a false positive silently merges two different prompts. The
 * figures below pin both sides: it flags every spelled-value cell, and it
 * flags most of a set of ordinary code and prose lines. So invocache takes
 * from it only what the cells need: the value after the AWS secret label is
 * also read in its spellings (base64, URL-safe base64, percent-encoded) and
 * redacted when it spells an AWS secret; nothing else (docs/cassettes.md,
 * "How far the generic rule goes").
 */
import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/secrets/index.js";
// SHA-256 noise: the LCG of ./fakes.js repeats its low bits over a 64-character alphabet.
import { noise } from "../reliability/secret-corpus.js";

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ALNUM = B64.slice(0, 62);
const none = { env: {} };

/** gitleaks v8 `generic-api-key` (config/gitleaks.toml), JS spelling of its `(?-i:[Aa]pi|API)`. */
const GITLEAKS_GENERIC =
  /[\w.-]{0,50}?(?:access|auth|[Aa]pi|API|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)/gi;
const GITLEAKS_ENTROPY = 3.5;

function shannon(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/** What gitleaks' generic rule reports in `text`: each secret group past its entropy and its letters-only allowlist. */
function gitleaksGeneric(text: string): string[] {
  return [...text.matchAll(GITLEAKS_GENERIC)]
    .map((m) => m[1]!)
    .filter((v) => shannon(v) >= GITLEAKS_ENTROPY && !/^[a-zA-Z_.-]+$/.test(v));
}

/** The spelled-value cells: 4 labels × spellings that hide the 40-character secret from a raw match. */
function spelledCells(): Array<{ id: string; text: string; secret: string; spelled: string }> {
  const cells: Array<{ id: string; text: string; secret: string; spelled: string }> = [];
  const labels: Array<[string, (v: string) => string]> = [
    ["ini", (v) => `aws_secret_access_key = ${v}`],
    ["env", (v) => `AWS_SECRET_ACCESS_KEY=${v}`],
    ["json", (v) => JSON.stringify({ aws_secret_access_key: v, region: "eu-west-1" })],
    ["yaml", (v) => `Credentials:\n  SecretAccessKey: "${v}"\n`],
  ];
  let seed = 300;
  for (const [label, wrap] of labels) {
    // A secret with '/' and '+' so that percent-encoding changes it.
    const secret = `${noise(18, `aws-${seed++}`, ALNUM)}/${noise(10, `aws-${seed++}`, ALNUM)}+${noise(10, `aws-${seed++}`, ALNUM)}`;
    const spellings: Array<[string, string]> = [
      ["base64", Buffer.from(secret).toString("base64")],
      ["base64-unpadded", Buffer.from(secret).toString("base64").replace(/=+$/, "")],
      ["base64url", Buffer.from(secret).toString("base64url")],
      ["percent", encodeURIComponent(secret)],
    ];
    for (const [form, spelled] of spellings) {
      cells.push({ id: `${label}/${form}`, text: wrap(spelled), secret, spelled });
    }
  }
  return cells;
}

/** Ordinary code and prose with a keyword before a value: none of it is a secret. */
const ORDINARY = [
  'cache_key = "user42-profile-v3"',
  "The API returns page_token=eyQ2NjcxMjM0NTY3ODkw in the next link",
  "tokenizer: cl100k_base-v2",
  "keyid: 5979465a7bffabb9a9ed96c17f3148ed56f2778cee1687775ff8c54ba14ce23b",
  "commit_key = 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345",
  "model_key: gpt-4o-mini-2024-07-18",
  "Use auth: oauth2-pkce-s256 for the CLI",
  "access: read-write-2025Q1",
  "idempotency_key: order-2026-12-05-0042",
  'sort_key: "created_at_2024_q4"',
  "api_version: 2024-10-21.preview",
  "secret_version: 2024-10-21-rc1",
  'const apiKey = process.env.OPENAI_API_KEY ?? "";',
  "aws_secret_access_key = {secret:aws-secret-access-key}",
];

describe("the spelled-value cells", () => {
  const cells = spelledCells();

  it("gitleaks' generic rule flags every one (the reference scanner sees them)", () => {
    // The percent spelling breaks gitleaks' value class at the first '%': it sees only the others.
    const seen = cells.filter((c) => gitleaksGeneric(c.text).length > 0).map((c) => c.id);
    expect(seen).toEqual(cells.filter((c) => !c.id.endsWith("/percent")).map((c) => c.id));
  });

  it.each(cells.map((c) => [c.id, c] as const))(
    "%s: the spelled secret never comes through",
    (_id, c) => {
      const out = redactSecrets(c.text, none);
      expect(out.value).not.toContain(c.spelled);
      expect(out.value).not.toContain(c.secret);
      expect(out.found.map((f) => f.name)).toEqual(["aws-secret-access-key"]);
      expect(out.value).toContain("{secret:aws-secret-access-key}");
      // Idempotent: redacting again changes nothing.
      expect(redactSecrets(out.value, none).value).toBe(out.value);
    },
  );
});

describe("ordinary code and prose after a keyword", () => {
  it("gitleaks' generic rule flags most of it (why invocache does not adopt it whole)", () => {
    // 8 of 14: cache keys, a pagination cursor, a tokenizer and a model name, a key id,
    // a git SHA, an auth flow, an access mode. Each would merge two identities if redacted.
    const flagged = ORDINARY.filter((t) => gitleaksGeneric(t).length > 0);
    expect(flagged).toEqual(ORDINARY.slice(0, 8));
  });

  it.each(ORDINARY)("%s comes through intact", (text) => {
    expect(redactSecrets({ text }, none).found).toStrictEqual([]);
  });

  it("a base64 value after the AWS label that does not spell an AWS secret is kept", () => {
    const notAws = Buffer.from("a configuration blob, not a key at all!").toString("base64");
    expect(redactSecrets(`aws_secret_access_key = ${notAws}`, none).found).toStrictEqual([]);
  });
});

describe("the raw AWS secret after its label, as before", () => {
  it("is redacted whole, and only it: a suffix after it is kept", () => {
    const secret = noise(40, "aws-raw", B64);
    expect(redactSecrets(`aws_secret_access_key = ${secret}`, none).value).toBe(
      "aws_secret_access_key = {secret:aws-secret-access-key}",
    );
    expect(redactSecrets(`aws_secret_access_key = ${secret}-old`, none).value).toBe(
      "aws_secret_access_key = {secret:aws-secret-access-key}-old",
    );
  });
});
