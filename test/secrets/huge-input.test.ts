/**
 * "Never throws on a string", at any size: a base64url attachment starts
 * with `eyJ`, a pasted log can hold megabytes after `Bearer `. Unbounded
 * quantifiers used to exhaust V8's regexp backtrack stack at ~5.6 M token
 * characters (RangeError), in the redactor, normalizePrompt and
 * invocationIdentity alike; on a response that threw away a paid answer.
 * 50 M (and every anchor) only with INVOCACHE_SOAK (memory, time); 10 M always.
 */
import { describe, expect, it } from "vitest";
import { invocationIdentity, normalizePrompt } from "../../src/index.js";
import { createSecretScanner } from "../../src/secrets/index.js";

const SOAK = process.env.INVOCACHE_SOAK !== undefined;
// The four of the report by default; every anchor under the soak.
const ANCHORS = SOAK
  ? ["eyJ", "sk-", "sk-ant-", "Bearer ", "ghp_", "glpat-", "xoxb-", "AIza", "hf_", "Basic "]
  : ["eyJ", "sk-", "Bearer ", "ghp_"];
const SIZES = SOAK ? [10_000_000, 50_000_000] : [10_000_000];

describe("huge token runs never throw", () => {
  for (const size of SIZES) {
    it(
      `redactor, normalizePrompt and invocationIdentity on ${size / 1e6} M token characters after each anchor`,
      () => {
        const scanner = createSecretScanner({ env: {} });
        const run = "a1B".repeat(Math.ceil(size / 3)).slice(0, size);
        for (const anchor of ANCHORS) {
          const text = `${anchor}${run} tail`;
          const out = scanner.redactString(text, "$", []);
          // The whole run is one token: redacted whole or kept whole, never cut inside.
          expect(out.endsWith(" tail"), anchor).toBe(true);
          expect(out.length === text.length || !out.includes("a1Ba1Ba1B"), anchor).toBe(true);
          expect(typeof normalizePrompt(text, { secrets: { env: {} } })).toBe("string");
          expect(
            invocationIdentity({ role: "r", model: "m", prompt: text }, { secrets: { env: {} } }),
          ).toMatch(/^[0-9a-f]{64}$/);
        }
      },
      size / 50,
    );
  }
});
