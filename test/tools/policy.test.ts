/** The pieces of tool policy on their own: per-kind modes, the side-effect rule, JSON diffs. */
import { describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { diffJson, formatDiffs } from "../../src/json/diff.js";
import { resolveKindModes } from "../../src/recorder/kind-modes.js";
import { isCacheSafe, sideEffectBypass } from "../../src/recorder/tool-policy.js";

describe("resolveKindModes", () => {
  it("one mode applies to both kinds; an object sets each", () => {
    expect(resolveKindModes("record", {})).toEqual({ model: "record", tool: "record" });
    expect(resolveKindModes({ model: "replay", tool: "verify" }, {})).toEqual({
      model: "replay",
      tool: "verify",
    });
    expect(resolveKindModes({ tool: "passthrough" }, { CI: "true" })).toEqual({
      model: "replay",
      tool: "passthrough",
    });
  });

  it("INVOCACHE_TOOL_MODE sets the tool kind when the option does not", () => {
    expect(resolveKindModes(undefined, { INVOCACHE_TOOL_MODE: "passthrough" })).toEqual({
      model: "auto",
      tool: "passthrough",
    });
    expect(resolveKindModes("replay", { INVOCACHE_TOOL_MODE: "passthrough" }).tool).toBe("replay");
    expect(() => resolveKindModes(undefined, { INVOCACHE_TOOL_MODE: "sometimes" })).toThrow(
      /INVOCACHE_TOOL_MODE must be one of/,
    );
  });

  it("bad kinds and modes are TypeErrors naming them", () => {
    expect(() => resolveKindModes({ agent: "replay" } as never, {})).toThrow(
      /unknown kind "agent"/,
    );
    expect(() => resolveKindModes({ tool: "later" } as never, {})).toThrow(/mode must be one of/);
  });

  it("a recorder exposes both, and mode stays the model's", () => {
    const r = createRecorder({ store: "memory://", mode: { model: "replay", tool: "auto" } });
    expect(r.mode).toBe("replay");
    expect(r.modes).toEqual({ model: "replay", tool: "auto" });
  });
});

describe("the side-effect rule", () => {
  it("applies only in auto on a shared store, to tools neither read-only nor idempotent", () => {
    const shared = "sqlite:///x/cache.sqlite";
    expect(sideEffectBypass("send_email", "auto", shared, undefined)).toMatch(
      /tool "send_email" may have side effects.*cacheSideEffects: true/,
    );
    expect(
      sideEffectBypass("send_email", "auto", shared, { destructiveHint: false }),
    ).toBeDefined();
    expect(sideEffectBypass("search", "auto", shared, { readOnlyHint: true })).toBeUndefined();
    expect(sideEffectBypass("put", "auto", shared, { idempotentHint: true })).toBeUndefined();
    expect(
      sideEffectBypass("send_email", "auto", shared, { cacheSideEffects: true }),
    ).toBeUndefined();
    expect(sideEffectBypass("send_email", "auto", "cassette://t.yaml", undefined)).toBeUndefined();
    for (const mode of ["replay", "record", "verify", "passthrough"] as const)
      expect(sideEffectBypass("send_email", mode, shared, undefined)).toBeUndefined();
    expect(isCacheSafe(undefined)).toBe(false);
  });
});

describe("diffJson", () => {
  it("names every differing leaf path, both sides", () => {
    const d = diffJson({ a: 1, b: [1], c: { "x-y": "p" } }, { a: 2, b: [1, 2], c: { "x-y": "q" } });
    expect(d).toEqual([
      { path: "$.a", expected: 1, actual: 2 },
      { path: "$.b[1]", expected: undefined, actual: 2 },
      { path: '$.c["x-y"]', expected: "p", actual: "q" },
    ]);
    expect(formatDiffs(d)).toContain("$.b[1]: (absent) → 2");
    expect(diffJson({ same: [1, { a: null }] }, { same: [1, { a: null }] })).toEqual([]);
  });
});
