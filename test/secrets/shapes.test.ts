/**
 * The shapes of the secret audit (issue "secrets never on disk"): what the
 * independent scanners found and we missed, what we damaged, and the env
 * rule's gaps. Fake values are assembled at run time (no key-shaped literal).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { cassetteStore } from "../../src/cassette/index.js";
import { manifestIdentity } from "../../src/identity/index.js";
import { createRecorder } from "../../src/index.js";
import {
  isSecretEnvName,
  looksLikeKeyMaterial,
  redactSecrets,
  restoreSecrets,
} from "../../src/secrets/index.js";
import { tempDir } from "../helpers/tmp.js";
import { noise } from "./fakes.js";

const j = (...p: string[]) => p.join("");
const none = { env: {} };
const redact = (text: string) => redactSecrets(text, none).value;
const b64 = (s: string) => Buffer.from(s).toString("base64");

const PASSWORD = j("S3cr3t", noise(12, 40));
const JWT = j("ey", "JhbGciOiJIUzI1NiJ9", ".", "ey", "J", noise(40, 41), ".", noise(43, 42));
const PEM = [
  j("-----BEGIN RSA ", "PRIVATE KEY-----"),
  noise(64, 43, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
  noise(40, 44, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
  j("-----END RSA ", "PRIVATE KEY-----"),
].join("\n");
const AZ_KEY = `${noise(86, 45, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}==`;
const GLPAT = j("gl", "pat-", noise(20, 46));
const HF = j("hf", "_", noise(34, 47, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"));
const OPENAI = j("sk-", "proj-", noise(48, 48));

describe("shapes the independent scanners saw and we missed", () => {
  const cases: Array<[string, string, string]> = [
    ["GitLab token", `use ${GLPAT} now`, GLPAT],
    ["Hugging Face token (letters only)", `HF ${HF}.`, HF],
    [
      "Azure storage AccountKey",
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${AZ_KEY};EndpointSuffix=core.windows.net`,
      AZ_KEY.slice(0, 40),
    ],
    ["postgres:// password", `postgres://admin:${PASSWORD}@db.example.com:5432/app`, PASSWORD],
    [
      "https:// userinfo password",
      `git clone https://alice:${PASSWORD}@git.example.com/r.git`,
      PASSWORD,
    ],
    ["connection-string Password=", `Server=db;User Id=sa;Password=${PASSWORD};`, PASSWORD],
    [
      "Basic user:secret",
      `Authorization: Basic ${b64(`alice:${PASSWORD}`)}`,
      b64(`alice:${PASSWORD}`),
    ],
    ["base64-wrapped JWT", `token ${b64(JWT)} end`, b64(JWT).slice(0, 40)],
    ["base64-wrapped key", `blob ${b64(OPENAI)} end`, b64(OPENAI).slice(4, 40)],
    ["base64 of user:key", `x ${b64(`user:${OPENAI}`)}`, b64(`user:${OPENAI}`).slice(8, 40)],
    [
      "URL-encoded PEM",
      `cb?k=${encodeURIComponent(PEM)}&x=1`,
      encodeURIComponent(PEM).slice(60, 100),
    ],
    [
      "URL-encoded connection string",
      `?c=${encodeURIComponent(`AccountKey=${AZ_KEY}`)}`,
      encodeURIComponent(AZ_KEY).slice(0, 40),
    ],
    ["PEM in JSON", JSON.stringify({ k: PEM }), PEM.split("\n")[1]!],
    [
      "PEM in JSON in JSON (tool-call arguments)",
      JSON.stringify({ arguments: JSON.stringify({ k: PEM }) }),
      PEM.split("\n")[2]!,
    ],
  ];
  it.each(cases)("%s is redacted", (_what, text, secret) => {
    expect(text).toContain(secret);
    const out = redact(text);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/\{secret:[a-z0-9-]+\}/);
    // Idempotent: a store rescanning a redacted value changes nothing.
    expect(redact(out)).toBe(out);
  });
});

describe("what must come through intact", () => {
  const png = b64(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.from(
        noise(3000, 49, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*()"),
      ),
    ]).toString("latin1"),
  );
  const benign = [
    "sk-learn-classification-tutorial-part-2024",
    "the bearer tokens2024-issued-by-the-idp rotate hourly",
    "Bearer of bad news: the committee-approved-schedule-2025 slipped",
    "commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345 fixed it",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    `data:image/png;base64,${png}`,
    j("pk_", "live_", noise(24, 50)),
    "arn:aws:iam::123456789012:role/service-role/MyLambdaRole",
    "Set up postgres with a password for the test database",
    "See https://example.com:8443/path?q=1 and mailto:alice@example.com",
    "The key=value pairs and password policies are documented at ftp://ftp.example.com/pub.",
    "{secret:openai-api-key} stays a placeholder",
  ];
  it.each(benign)("%s", (text) => {
    expect(redactSecrets({ text }, none).found).toStrictEqual([]);
  });

  it("POSTGRES_PASSWORD=postgres leaves the word alone in responses and manifests; the manifest hashes to its id", async () => {
    const dir = tempDir("shapes");
    const env = { POSTGRES_PASSWORD: "postgres", DB_PASSWORD: "password" };
    const path = join(dir, "pg.yaml");
    const store = cassetteStore(path, { env, parseCache: false });
    const recorder = createRecorder({ store, mode: "auto", secrets: { env } });
    const req = { role: "r", model: "m", prompt: "Set up postgres with a password" };
    await recorder.call(req, async () => ({ text: "postgres is ready; password set" }));
    await recorder.close();
    await store.close();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("{secret:");
    const doc = parse(text) as { entries: Array<{ id: string; manifest: never }> };
    expect(doc.entries).toHaveLength(1); // else the loop below checks nothing
    for (const e of doc.entries) expect(manifestIdentity(e.manifest)).toBe(e.id);
  });
});

describe("the env rule", () => {
  it("names: *_CONNECTION_STRING always; *_URL / *_DSN / DATABASE_URL / GIT_REMOTE_URL when they carry credentials", () => {
    expect(isSecretEnvName("AZURE_STORAGE_CONNECTION_STRING")).toBe(true);
    expect(isSecretEnvName("DATABASE_URL", `postgres://app:${PASSWORD}@db/app`)).toBe(true);
    expect(isSecretEnvName("GIT_REMOTE_URL", `https://bot:${PASSWORD}@git.example.com/r`)).toBe(
      true,
    );
    expect(isSecretEnvName("SENTRY_DSN", `https://${PASSWORD}:x@o1.ingest.example.io/1`)).toBe(
      true,
    );
    expect(isSecretEnvName("MSSQL_DSN", `Server=db;Password=${PASSWORD}`)).toBe(true);
    expect(isSecretEnvName("REDIS_URL", "redis://localhost:6379")).toBe(false);
    expect(isSecretEnvName("DATABASE_URL")).toBe(false);
  });

  it("values: an HF token with no digit is key material; ordinary words are not", () => {
    expect(looksLikeKeyMaterial(HF)).toBe(true);
    for (const word of ["postgres", "password", "changeme", "localhost"])
      expect(looksLikeKeyMaterial(word), word).toBe(false);
  });

  it("an env-held HF_TOKEN and DATABASE_URL are redacted in every spelling, manifest included", () => {
    const url = `postgres://app:${PASSWORD}@db.internal:5432/app`;
    const env = { HF_TOKEN: HF, DATABASE_URL: url };
    const value = {
      prompt: `token ${HF}, db ${encodeURIComponent(url)}, b64 ${b64(url)}`,
      args: JSON.stringify({ dsn: url, tok: HF }),
    };
    const out = JSON.stringify(redactSecrets(value, { env }).value);
    expect(out).not.toContain(HF);
    expect(out).not.toContain(PASSWORD);
    expect(out).toContain("{secret:HF_TOKEN}");
    expect(out).toContain("{secret:DATABASE_URL:url}");
  });
});

describe("objects", () => {
  it("two keys shaped like keys stay two keys", () => {
    const a = j("sk-", noise(48, 51));
    const b = j("sk-", noise(48, 52));
    const { value } = redactSecrets({ [a]: 1, [b]: 2 }, none);
    expect(Object.values(value).sort()).toStrictEqual([1, 2]);
    expect(JSON.stringify(value)).not.toContain(a);
  });
});

describe("restoreSecrets only restores where the recorded value was the secret", () => {
  const env = { GITHUB_TOKEN: j("gh", "p_", noise(36, 53)) };
  it("fills a string that is one placeholder", () => {
    expect(restoreSecrets({ token: "{secret:GITHUB_TOKEN}" }, { env }).value).toStrictEqual({
      token: env.GITHUB_TOKEN,
    });
  });
  it("never puts the token into a URL, a header or a key a recording chose", () => {
    const hostile = {
      url: "https://attacker.example/collect?t={secret:GITHUB_TOKEN}",
      header: "Bearer {secret:GITHUB_TOKEN}",
      "{secret:GITHUB_TOKEN}": "key",
      encoded: "{secret:GITHUB_TOKEN:url}&x=1",
    };
    const r = restoreSecrets(hostile, { env });
    expect(r.value).toStrictEqual(hostile);
    expect(JSON.stringify(r.value)).not.toContain(env.GITHUB_TOKEN);
    expect(r.restored).toStrictEqual([]);
    expect(r.kept).toBe(4);
  });
});
