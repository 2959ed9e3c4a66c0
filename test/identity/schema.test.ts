import { describe, expect, it } from "vitest";
import {
  assertManifest,
  invocationManifest,
  isIdentity,
  isIdentityPrefix,
  MANIFEST_FIELDS,
} from "../../src/identity/index.js";
import { validateEntry } from "../../src/store/envelope.js";

describe("the manifest schema has one home", () => {
  it("MANIFEST_FIELDS is exactly what invocationManifest builds (params included when set)", () => {
    const m = invocationManifest({ role: "r", prompt: "p", params: { t: 1 } });
    expect(Object.keys(m).sort()).toEqual([...MANIFEST_FIELDS]);
  });

  it("isIdentity accepts 64 lowercase hex only", () => {
    expect(isIdentity("a".repeat(64))).toBe(true);
    expect(isIdentity("A".repeat(64))).toBe(false);
    expect(isIdentity("a".repeat(63))).toBe(false);
    expect(isIdentity(42)).toBe(false);
    expect(isIdentityPrefix("3F2A9C0D")).toBe(true);
    expect(isIdentityPrefix("3f2a9c0")).toBe(false);
  });

  it("the store envelope refuses a bad manifest with identity's own check", () => {
    const manifest = { ...invocationManifest({ role: "r", prompt: "p" }), extra: 1 };
    expect(() => assertManifest(manifest, "m")).toThrow(/unknown field "extra"/);
    const entry = {
      v: 1,
      id: "a".repeat(64),
      manifest,
      response: null,
      meta: {
        recordedAt: "2026-01-01T00:00:00.000Z",
        durationMs: 1,
        normalization: 1,
        invocacheVersion: "0.0.0",
        occurrence: 0,
        attempt: 0,
      },
    };
    expect(() => validateEntry(entry, "here")).toThrow(
      /\$\.manifest\.extra is not a manifest field/,
    );
  });
});
