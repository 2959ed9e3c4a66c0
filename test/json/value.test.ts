import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assertJsonValue,
  cloneJsonValue,
  type JsonValue,
  jsonEqual,
  jsonSnapshot,
  toJsonValue,
} from "../../src/json/index.js";
import { openStore } from "../../src/store/open.js";

describe("src/json: one home for JSON values", () => {
  it("jsonSnapshot checks and copies in one walk, and reuses its own snapshots", () => {
    const live = { a: [1, { b: "x" }] };
    const snap = jsonSnapshot(live, "value");
    expect(snap).toEqual(live);
    expect(snap).not.toBe(live);
    expect(Object.isFrozen(snap.a)).toBe(true);
    live.a.push(2);
    expect(snap.a).toHaveLength(2);
    expect(jsonSnapshot(snap, "value")).toBe(snap);
    const wrapped = jsonSnapshot({ response: snap }, "entry");
    expect(wrapped.response).toBe(snap);
  });

  it("jsonSnapshot refuses what JSON would change, naming the path", () => {
    expect(() => jsonSnapshot({ when: new Date() }, "value")).toThrow(/value\.when is a Date/);
    expect(() => jsonSnapshot([Number.NaN], "value")).toThrow(/value\[0\] is NaN/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => jsonSnapshot(cyclic, "value")).toThrow(/value\.self is a cycle/);
  });

  it("a plain object from another realm is a plain object everywhere", () => {
    const foreign = runInNewContext("({ a: { b: [1] } })") as unknown;
    expect(() => assertJsonValue(foreign, "value")).not.toThrow();
    expect(toJsonValue(foreign, "params")).toEqual({ a: { b: [1] } });
  });

  it("toJsonValue copies every member as an own data property, __proto__ and built-in names too", () => {
    const given = JSON.parse(
      '{"__proto__":{"polluted":1},"toString":"t","constructor":{"x":[1]},"a":{"__proto__":[2]}}',
    ) as Record<string, unknown>;
    const copy = toJsonValue(given, "params") as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__", "toString", "constructor", "a"]);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")).toEqual({
      value: { polluted: 1 },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(copy.a, "__proto__")?.value).toEqual([2]);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(given));
    expect(copy.constructor).not.toBe(given.constructor); // a copy, not shared
  });

  it("toJsonValue: JSON.stringify's view of plain values, and errors naming the member", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string(),
          fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.constant(-0)),
        ),
        (value) => {
          // (-0 is kept as it is; JSON text spells it 0 either way.)
          expect(JSON.stringify(toJsonValue(value, "params"))).toBe(JSON.stringify(value));
        },
      ),
      { numRuns: 300 },
    );
    expect(() => toJsonValue({ a: 1, b: Number.NaN }, "params")).toThrow(/^params\.b is NaN/);
    expect(() => toJsonValue({ a: { c: Number.POSITIVE_INFINITY } }, "params")).toThrow(
      /^params\.a\.c is Infinity/,
    );
    expect(toJsonValue({ at: { toJSON: () => "x" }, n: null, t: true }, "params")).toEqual({
      at: "x",
      n: null,
      t: true,
    });
  });

  it("a store still refuses non-JSON from a direct caller, and keeps a snapshot", async () => {
    const store = openStore("memory://");
    try {
      await expect(store.set("k", { x: new Map() } as never)).rejects.toThrow(/value\.x is a Map/);
      const v = { n: [1] };
      const p = store.set("k", v);
      v.n.push(2);
      await p;
      expect(await store.get("k")).toEqual({ n: [1] });
    } finally {
      await store.close();
    }
  });

  it("jsonEqual ignores key order", () => {
    expect(jsonEqual({ a: 1, b: [2] }, { b: [2], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 2 })).toBe(false);
  });
});

describe("cloneJsonValue", () => {
  it("property: equals structuredClone, shares nothing mutable, keeps __proto__ and -0", () => {
    const json = fc.jsonValue().map((v) => v as JsonValue);
    const withProto = fc
      .tuple(json, json)
      .map(
        ([a, b]) =>
          JSON.parse(
            `{"__proto__":${JSON.stringify(a)},"k":[${JSON.stringify(b)},-0]}`,
          ) as JsonValue,
      );
    // Tagged: fc.jsonValue() itself can make an object with an own
    // "__proto__" (and no "k"), so only the values built above carry the -0.
    const tagged = fc.oneof(
      json.map((value) => ({ value, built: false })),
      withProto.map((value) => ({ value, built: true })),
    );
    fc.assert(
      fc.property(tagged, ({ value, built }) => {
        const copy = cloneJsonValue(value);
        expect(copy).toStrictEqual(structuredClone(value));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
        if (value !== null && typeof value === "object") {
          expect(copy).not.toBe(value);
          // A member named __proto__ is data, as JSON.parse made it, never the prototype.
          if (!Array.isArray(value) && Object.hasOwn(value, "__proto__")) {
            expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
            expect(Object.hasOwn(copy as object, "__proto__")).toBe(true);
            if (built) expect(Object.is((copy as { k: number[] }).k[1], -0)).toBe(true);
          }
        }
      }),
      // The shape a CI run found: an own "__proto__" from fc.jsonValue(), no "k".
      { numRuns: 500, examples: [[{ value: JSON.parse('{"__proto__":""}'), built: false }]] },
    );
  });

  it("a change to the copy leaves the original as it was", () => {
    const original: JsonValue = { a: [1, { b: "x" }], c: { d: null } };
    const copy = cloneJsonValue(original) as { a: [number, { b: string }]; c: { d: null } };
    copy.a[1].b = "changed";
    copy.a.push(2);
    expect(original).toEqual({ a: [1, { b: "x" }], c: { d: null } });
  });
});
