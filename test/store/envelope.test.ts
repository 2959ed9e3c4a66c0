import { describe, expect, it } from "vitest";
import { EntryFormatError, UnsupportedEntryVersionError } from "../../src/errors.js";
import {
  ENTRY_VERSION,
  type Entry,
  entryKey,
  entryLeaseKey,
  entryPrefix,
  runKey,
  validateEntry,
} from "../../src/store/envelope.js";
import { openStore } from "../../src/store/open.js";
import { modelOf } from "../helpers/model-manifest.js";

const id = "a".repeat(64);

// biome-ignore lint/suspicious/noExplicitAny: malformed entries are built by poking at any field
type Loose = Record<string, any>;

function entry(): Entry {
  return {
    v: 1,
    id,
    manifest: { attempt: 1, inputs: ["sha256:00"], model: "m", prompt: "p", role: "r", task: "" },
    response: { kind: "stream", events: [{ t: 0, data: "x" }] },
    meta: {
      recordedAt: "2026-01-31T12:00:00.000Z",
      durationMs: 12.5,
      normalization: 1,
      invocacheVersion: "0.1.0",
      occurrence: 0,
      attempt: 1,
      parent: "b".repeat(64),
      verdict: { verdict: "rejected", reason: "tests failed", at: "2026-01-31T12:00:01Z" },
    },
  };
}

function formatError(value: unknown): EntryFormatError {
  try {
    validateEntry(value, "test.sqlite k");
  } catch (error) {
    expect(error).toBeInstanceOf(EntryFormatError);
    return error as EntryFormatError;
  }
  throw new Error("validateEntry accepted a malformed entry");
}

describe("validateEntry", () => {
  it("returns a valid entry, typed", () => {
    const value: unknown = entry();
    const typed = validateEntry(value, "here");
    expect(typed.meta.verdict?.verdict).toBe("rejected");
    expect(typed).toStrictEqual(entry());
  });

  it("accepts an entry without the optional fields", () => {
    const e = entry();
    delete e.meta.parent;
    delete e.meta.verdict;
    expect(validateEntry(e, "here")).toBe(e);
    const withParams = entry();
    modelOf(withParams.manifest).params = { temperature: 0 };
    expect(validateEntry(withParams, "here")).toBe(withParams);
  });

  it("survives a store round trip", async () => {
    const store = openStore("memory://");
    await store.set(entryKey("ns", id, 0), entry() as unknown as Parameters<typeof store.set>[1]);
    expect(validateEntry(await store.get(entryKey("ns", id, 0)), "memory")).toStrictEqual(entry());
    await store.close();
  });

  it("reports an entry from a newer invocache instead of misreading it", () => {
    const newer = { ...entry(), v: 2, somethingNew: true };
    let error: unknown;
    try {
      validateEntry(newer, "redis://h:1 ns:e:aaa:0");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnsupportedEntryVersionError);
    expect(error).toMatchObject({
      code: "ERR_ENTRY_VERSION",
      version: 2,
      supported: ENTRY_VERSION,
    });
    expect((error as Error).message).toMatch(/newer invocache.*Upgrade invocache/);
    expect((error as Error).message).toContain("redis://h:1 ns:e:aaa:0");
  });

  it("says which field is wrong, and where the entry came from", () => {
    const cases: Array<[string, (e: Loose) => void]> = [
      ["$.v", (e) => (e.v = 0)],
      ["$.v", (e) => (e.v = "1")],
      ["$.v", (e) => (e.v = 1.5)],
      ["$.v", (e) => delete e.v],
      ["$.id", (e) => (e.id = "ABC")],
      ["$.extra", (e) => (e.extra = 1)],
      ["$.manifest", (e) => (e.manifest = [])],
      ["$.manifest.attempt", (e) => (e.manifest.attempt = -1)],
      ["$.manifest.inputs", (e) => (e.manifest.inputs = [1])],
      ["$.manifest.prompt", (e) => delete e.manifest.prompt],
      ["$.manifest.model", (e) => (e.manifest.model = null)],
      ["$.manifest.params", (e) => (e.manifest.params = {})],
      ["$.manifest.cwd", (e) => (e.manifest.cwd = "/home/u")],
      ["$.response", (e) => (e.response = undefined)],
      ["$.meta", (e) => (e.meta = null)],
      ["$.meta.recordedAt", (e) => (e.meta.recordedAt = "yesterday")],
      ["$.meta.recordedAt", (e) => (e.meta.recordedAt = "2026-01-31")],
      ["$.meta.durationMs", (e) => (e.meta.durationMs = -1)],
      ["$.meta.normalization", (e) => (e.meta.normalization = 0)],
      ["$.meta.invocacheVersion", (e) => (e.meta.invocacheVersion = "")],
      ["$.meta.occurrence", (e) => (e.meta.occurrence = 0.5)],
      ["$.meta.attempt", (e) => (e.meta.attempt = 2)],
      ["$.meta.parent", (e) => (e.meta.parent = "short")],
      ["$.meta.verdict.verdict", (e) => (e.meta.verdict.verdict = "maybe")],
      ["$.meta.verdict.reason", (e) => (e.meta.verdict.reason = 1)],
      ["$.meta.verdict.at", (e) => delete e.meta.verdict.at],
      ["$.meta.surprise", (e) => (e.meta.surprise = true)],
    ];
    for (const [path, mutate] of cases) {
      const e = entry() as unknown as Loose;
      mutate(e);
      const error = formatError(e);
      expect(error.path, path).toBe(path);
      expect(error.code).toBe("ERR_ENTRY_FORMAT");
      expect(error.where).toBe("test.sqlite k");
      expect(error.message).toContain("test.sqlite k");
    }
    for (const value of [null, "entry", [entry()], 1]) expect(formatError(value).path).toBe("$");
  });
});

describe("key layout", () => {
  it("builds entry, lease and run keys", () => {
    expect(entryKey("ns", id, 3)).toBe(`ns:e:${id}:3`);
    expect(entryPrefix("ns")).toBe("ns:e:");
    expect(entryPrefix("ns", id)).toBe(`ns:e:${id}:`);
    expect(entryKey("ns", id, 3).startsWith(entryPrefix("ns", id))).toBe(true);
    expect(entryLeaseKey("ns", id, 0)).toBe(`ns:lease:${id}:0`);
    expect(runKey("ns", "ci-42")).toBe("ns:run:ci-42");
  });

  it("refuses namespaces with ':' so one namespace's prefix never covers another's", () => {
    expect(() => entryKey("a:e", id, 0)).toThrow(TypeError);
    expect(() => entryKey("", id, 0)).toThrow(/namespace/);
    expect(() => entryKey("ns\n", id, 0)).toThrow(/namespace/);
  });

  it("refuses bad ids, occurrences and run ids", () => {
    expect(() => entryKey("ns", "abc", 0)).toThrow(/id must be/);
    expect(() => entryKey("ns", id, -1)).toThrow(RangeError);
    expect(() => entryKey("ns", id, 1.5)).toThrow(RangeError);
    expect(() => runKey("ns", "")).toThrow(/runId/);
  });
});
