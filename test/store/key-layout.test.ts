import { describe, expect, it } from "vitest";
import { parseEntryKey as fromCassette } from "../../src/cassette/index.js";
import {
  entryKey,
  entryLeaseKey,
  isEntryKey,
  parseEntryKey,
  parseRunKey,
  runKey,
} from "../../src/store/envelope.js";

const id = "ab".repeat(32);

describe("the store-key layout has one home", () => {
  it("parses what it builds, and nothing else", () => {
    expect(parseEntryKey(entryKey("ns", id, 3))).toEqual({ namespace: "ns", id, occurrence: 3 });
    expect(parseRunKey(runKey("ns", "ci:1"))).toEqual({ namespace: "ns", runId: "ci:1" });
    expect(isEntryKey(entryLeaseKey("ns", id, 0))).toBe(false);
    expect(isEntryKey(runKey("ns", "r"))).toBe(false);
    expect(parseRunKey(entryKey("ns", id, 0))).toBeUndefined();
    expect(isEntryKey(`ns:e:${id}:01`)).toBe(false);
  });

  it("the cassette's parseEntryKey is the same function", () => {
    expect(fromCassette).toBe(parseEntryKey);
  });
});
