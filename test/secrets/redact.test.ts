/**
 * Secret scanning: env values in every spelling, known key shapes, exact
 * restoring, and no false alarms on ordinary prose.
 */
import { describe, expect, it } from "vitest";
import {
  createSecretScanner,
  isSecretEnvName,
  redactSecrets,
  renderForm,
  restoreSecrets,
  SECRET_ANCHORS,
  SECRET_FORMS,
  SECRET_PATTERNS,
  scanSecrets,
  secretEnvValues,
} from "../../src/secrets/index.js";
import { FAKE_AWS_SECRET, FAKE_KEYS, FAKE_PEM, noise } from "./fakes.js";

const KEY = `k3y-${noise(24, 21)}/+=:"é\\`; // characters that change under every encoding
const env = { SERVICE_API_KEY: KEY, HOME: "/home/someone-long", SHORT_TOKEN: "abc" };

describe("which environment variables are secret", () => {
  it("follows the name rule", () => {
    for (const name of [
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "GITHUB_TOKEN",
      "MY_SECRET",
      "AWS_SECRET_ACCESS_KEY",
      "AUTHORIZATION",
      "DB_PASSWORD",
      "openai_api_key",
    ]) {
      expect(isSecretEnvName(name), name).toBe(true);
    }
    for (const name of [
      "HOME",
      "PATH",
      "TOKENIZER",
      "API_KEY_ID",
      "SECRETARY",
      "AWS_ACCESS_KEY_ID",
    ]) {
      expect(isSecretEnvName(name), name).toBe(false);
    }
  });

  it("ignores values shorter than 8 characters and allowed names", () => {
    expect(secretEnvValues({ env })).toStrictEqual([["SERVICE_API_KEY", KEY]]);
    expect(secretEnvValues({ env, allowNames: ["SERVICE_API_KEY"] })).toStrictEqual([]);
  });
});

describe("env values", () => {
  it("are found raw, JSON-escaped, URL-encoded and base64 (any alignment, std and url-safe)", () => {
    const carriers: Record<string, string> = {
      raw: `use ${KEY} please`,
      json: `{"key":"${JSON.stringify(KEY).slice(1, -1)}"}`,
      url: `https://api.example.com/v1?key=${encodeURIComponent(KEY)}&x=1`,
    };
    for (const prefix of ["", "u", "us"]) {
      const b64 = Buffer.from(`${prefix}${KEY}!tail`).toString("base64");
      carriers[`b64 ${prefix.length}`] = `Basic ${b64}`;
      carriers[`b64url ${prefix.length}`] = Buffer.from(`${prefix}${KEY}`).toString("base64url");
    }
    for (const [what, text] of Object.entries(carriers)) {
      const { value, found } = redactSecrets({ text }, { env, patterns: [] });
      expect(
        found.map((f) => f.name),
        what,
      ).toStrictEqual(["SERVICE_API_KEY"]);
      expect(value.text, what).toMatch(/\{secret:SERVICE_API_KEY(:[a-z0-9-]+)?\}/);
      // …never restored inside a longer string (a recording must not build a URL around a key)…
      // …and restored byte for byte where the string was the secret alone.
      const whole = /^\{secret:[^}]*\}$/.test(value.text);
      expect(restoreSecrets(value, { env }).value.text, what).toBe(whole ? text : value.text);
    }
  });

  it("restores every form exactly, and only secret-named variables", () => {
    for (const form of SECRET_FORMS) {
      const placeholder =
        form === "raw" ? "{secret:SERVICE_API_KEY}" : `{secret:SERVICE_API_KEY:${form}}`;
      expect(restoreSecrets(placeholder, { env }).value).toBe(renderForm(KEY, form));
      expect(restoreSecrets(`<${placeholder}>`, { env }).value).toBe(`<${placeholder}>`);
    }
    const r = restoreSecrets(
      ["{secret:HOME}", "{secret:MISSING_TOKEN}", "{secret:openai-api-key}"],
      { env },
    );
    expect(r.value).toStrictEqual([
      "{secret:HOME}",
      "{secret:MISSING_TOKEN}",
      "{secret:openai-api-key}",
    ]);
    expect(r.missing).toStrictEqual(["MISSING_TOKEN"]);
  });

  it("are found in object keys and nested values, with JSON paths", () => {
    const found = scanSecrets(
      { headers: { [`x-${KEY}`]: 1 }, list: ["a", { deep: KEY }] },
      { env, patterns: [] },
    );
    // The path names the redacted key: findings never carry the secret.
    expect(found.map((f) => f.path)).toStrictEqual([
      '$.headers["x-{secret:SERVICE_API_KEY}"]',
      "$.list[1].deep",
    ]);
  });

  it("leaves values without secrets untouched (same object)", () => {
    const value = { a: [1, "plain"], b: { c: "text" } };
    expect(redactSecrets(value, { env }).value).toBe(value);
  });
});

describe("key shapes", () => {
  it.each(FAKE_KEYS)("%s is redacted without any env variable", (name, secret) => {
    const { value, found } = redactSecrets(`before ${secret} after`, { env: {} });
    expect(found.map((f) => f.name)).toStrictEqual([name]);
    expect(value).toBe(`before {secret:${name}} after`);
  });

  it("redacts only the token after Bearer, and a JWT without the sentence's full stop", () => {
    const token = noise(40, 31);
    expect(redactSecrets(`Authorization: Bearer ${token}`, { env: {} }).value).toBe(
      "Authorization: Bearer {secret:bearer-token}",
    );
    const jwt = FAKE_KEYS.find(([n]) => n === "json-web-token")![1];
    expect(redactSecrets(`token ${jwt}.`, { env: {} }).value).toBe(
      "token {secret:json-web-token}.",
    );
  });

  it("redacts an AWS secret key after its label, and a PEM block up to its END line", () => {
    expect(redactSecrets(`aws_secret_access_key = ${FAKE_AWS_SECRET}\n`, { env: {} }).value).toBe(
      "aws_secret_access_key = {secret:aws-secret-access-key}\n",
    );
    expect(redactSecrets(`key:\n${FAKE_PEM}\nThanks, that is all.`, { env: {} }).value).toBe(
      "key:\n{secret:private-key}\nThanks, that is all.",
    );
  });

  it("does not fire on ordinary prose and code", () => {
    const prose = [
      "Design a task-management-system-architecture for the team",
      "Bearer authentication is described in RFC 6750",
      "The bearer tokenization-of-everything-approach failed",
      "ask-the-user-before-deleting-files",
      "eyJ is how base64 JSON starts; eyJhbGciOiJIUzI1NiJ9 alone is not a token",
      "const secret_access_key = process.env.AWS_SECRET_ACCESS_KEY;",
      "sha256:3f2a9c0b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
      "xoxo-hugs-and-kisses-to-everyone",
    ];
    for (const text of prose) expect(scanSecrets(text, { env: {} }), text).toStrictEqual([]);
  });

  it("every pattern has a name no environment variable can have", () => {
    for (const p of SECRET_PATTERNS) expect(p.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)+$/);
  });
});

describe("a prepared scanner", () => {
  it("reads the environment once and can be reused", () => {
    const live = { RUN_TOKEN: noise(20, 41) };
    const scanner = createSecretScanner({ env: live });
    live.RUN_TOKEN = "changed-after-prepare";
    expect(scanner.redact(`x ${noise(20, 41)} y`).value).toBe("x {secret:RUN_TOKEN} y");
  });
});

describe("SECRET_ANCHORS pre-check", () => {
  it("accepts every text in which some built-in pattern finds a secret", () => {
    const texts = [
      ...FAKE_KEYS.map(([, key]) => `see ${key} here`),
      `aws_secret_access_key = ${FAKE_AWS_SECRET}`,
      `SecretAccessKey: "${FAKE_AWS_SECRET}"`,
      FAKE_PEM,
    ];
    let anchored = 0;
    for (const text of texts) {
      const found = redactSecrets(text, { env: {} }).found;
      const any = SECRET_PATTERNS.some((p) => new RegExp(p.regex.source, p.regex.flags).test(text));
      if (any) {
        expect(SECRET_ANCHORS.test(text), text.slice(0, 40)).toBe(true);
        anchored++;
      }
      expect(found.length, text.slice(0, 40)).toBeGreaterThan(0);
    }
    // The anchor check above ran at all (a pattern list that matched nothing would skip it).
    expect(anchored).toBeGreaterThan(0);
  });
});
