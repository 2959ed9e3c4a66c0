/**
 * The secret rule on params (manifest.ts): a params text found clean is not
 * scanned again by the same redactor, so these check that the shortcut
 * never lets a secret through, on a repeat, under another redactor, or
 * after the environment changes.
 */
import { describe, expect, it } from "vitest";
import { invocationManifest } from "../../src/identity/index.js";
import { IDENTITY_SECRETS } from "../../src/normalize/secrets-rule.js";
import { createSecretScanner } from "../../src/secrets/redact.js";

const KEY = "sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2m3N4";
const req = (params: Record<string, unknown>) => ({ role: "builder", prompt: "p", params });

describe("params redaction", () => {
  it("redacts a key in params on every call, not only the first", () => {
    const secrets = createSecretScanner({ ...IDENTITY_SECRETS, env: {} });
    for (let i = 0; i < 3; i++) {
      const m = invocationManifest(req({ ":path": "/v1/chat/completions", auth: KEY }), {
        secrets,
      });
      expect(m.params).toEqual({
        ":path": "/v1/chat/completions",
        auth: "{secret:openai-api-key}",
      });
    }
  });

  it("scans params found clean by one redactor again under another", () => {
    const value = "t0k3n-9f8e7d6c5b4a39281706";
    const params = { ":host": "https://api.example", header: value };
    const plain = createSecretScanner({ ...IDENTITY_SECRETS, env: {} });
    expect(invocationManifest(req(params), { secrets: plain }).params).toEqual(params);
    const withEnv = createSecretScanner({ ...IDENTITY_SECRETS, env: { SERVICE_TOKEN: value } });
    expect(invocationManifest(req(params), { secrets: withEnv }).params).toEqual({
      ":host": "https://api.example",
      header: "{secret:SERVICE_TOKEN}",
    });
    // And the first redactor still answers from its own scan.
    expect(invocationManifest(req(params), { secrets: plain }).params).toEqual(params);
  });

  it("tells apart params that differ only in a string the scan would change", () => {
    const secrets = createSecretScanner({ ...IDENTITY_SECRETS, env: {} });
    const clean = invocationManifest(req({ q: "sk-proj-short" }), { secrets });
    expect(clean.params).toEqual({ q: "sk-proj-short" });
    const withKey = invocationManifest(req({ q: KEY }), { secrets });
    expect(withKey.params).toEqual({ q: "{secret:openai-api-key}" });
  });
});
