/** The `$invocache` JSON convention for values JSON cannot hold. */
import { describe, expect, it } from "vitest";
import { decodeJson, encodeJson } from "../../src/adapters/index.js";
import { parseProviderJson } from "../../src/adapters/json-codec.js";

describe("JSON codec", () => {
  it("round-trips Dates, bytes, URLs, non-finite numbers and undefined array items", () => {
    const value = {
      at: new Date("2026-01-02T03:04:05.678Z"),
      invalid: new Date(Number.NaN),
      bytes: new Uint8Array([0, 1, 254, 255]),
      buffer: new Uint8Array([9, 8]).buffer,
      url: new URL("https://example.com/a?b=c"),
      nums: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1.5],
      holes: [1, undefined, 3],
      dropped: undefined,
      nested: [{ deep: new Date(0) }],
    };
    const { json, lossless } = encodeJson(value);
    expect(lossless).toBe(true);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(json).toMatchObject({ at: { $invocache: "Date", iso: "2026-01-02T03:04:05.678Z" } });
    const back = decodeJson(json) as typeof value;
    expect(back.at).toEqual(value.at);
    expect(Number.isNaN(back.invalid.getTime())).toBe(true);
    expect(back.bytes).toEqual(value.bytes);
    expect(new Uint8Array(back.buffer)).toEqual(new Uint8Array([9, 8]));
    expect(back.url).toEqual(value.url);
    expect(back.nums).toEqual(value.nums);
    expect(back.holes).toEqual([1, undefined, 3]);
    expect("dropped" in back).toBe(false);
    expect(back.nested[0]?.deep).toEqual(new Date(0));
  });

  it("escapes plain objects that have a $invocache key, so they never decode as a tag", () => {
    const value = { $invocache: "Date", iso: "not a tag", __proto__x: 1 };
    const { json } = encodeJson(value);
    expect(json).toEqual({ $invocache: "Object", value });
    expect(decodeJson(json)).toEqual(value);
  });

  it("reports values without a lossless form instead of mangling them", () => {
    for (const v of [new Map(), new Error("x"), () => 1, 10n, Symbol("s")]) {
      expect(encodeJson({ v }).lossless).toBe(false);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(encodeJson(cyclic).lossless).toBe(false);
    expect(() => decodeJson({ $invocache: "Mystery" })).toThrow(/re-record/i);
  });
});

describe("parseProviderJson", () => {
  it("reads a number a double cannot hold as its JavaScript spelling, everything else as JSON.parse does", () => {
    expect(
      parseProviderJson('{"a":1e400,"b":-1E+400,"c":1e300,"d":"1e400","e":[2.5e-400]}'),
    ).toStrictEqual({
      a: "Infinity",
      b: "-Infinity",
      c: 1e300,
      d: "1e400",
      e: [0],
    });
    expect(parseProviderJson(`[${"9".repeat(400)}]`)).toStrictEqual(["Infinity"]);
    expect(parseProviderJson('{"id":"chatcmpl-3e456","n":7}')).toStrictEqual({
      id: "chatcmpl-3e456",
      n: 7,
    });
    expect(() => parseProviderJson("{")).toThrow(SyntaxError);
  });
});
