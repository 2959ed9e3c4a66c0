/** `valueDigest`: what `Store.deleteIfUnchanged` compares. */
import { describe, expect, it } from "vitest";
import { valueDigest } from "../../src/store/index.js";

describe("valueDigest", () => {
  it("is 64 lowercase hex, the same for the same JSON whatever its key order", () => {
    const a = valueDigest({ b: [1, { y: 2, x: 1 }], a: "é" });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(valueDigest({ a: "é", b: [1, { x: 1, y: 2 }] })).toBe(a);
  });

  it("differs when anything differs: a field, array order, a type, a recording time", () => {
    const base = { meta: { recordedAt: "2026-01-01T00:00:00.000Z" }, response: [1, 2] };
    const digests = [
      base,
      { meta: { recordedAt: "2026-01-01T00:00:00.001Z" }, response: [1, 2] },
      { meta: { recordedAt: "2026-01-01T00:00:00.000Z" }, response: [2, 1] },
      { meta: { recordedAt: "2026-01-01T00:00:00.000Z" }, response: ["1", 2] },
      { meta: { recordedAt: "2026-01-01T00:00:00.000Z" }, response: [1, 2], extra: null },
      null,
      "null",
      0,
      "",
    ].map(valueDigest);
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("keeps lone surrogates apart (WTF-8, not U+FFFD)", () => {
    expect(valueDigest("\uD800")).not.toBe(valueDigest("\uDBFF"));
    expect(valueDigest("\uD800")).not.toBe(valueDigest("\uFFFD"));
  });
});
