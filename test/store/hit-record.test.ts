/**
 * The hit's cut of a stored record (src/store/hit-record.ts): the record
 * text without the value's manifest member, found by structure. Checked
 * against JSON.parse on random JSON, and on texts the scan must refuse.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordWithoutManifest } from "../../src/store/hit-record.js";
import { serializeRecord } from "../../src/store/json.js";

// Strings rich in what the scan must not mistake for structure.
const jsonish = fc.oneof(
  fc.string(),
  fc
    .array(
      fc.constantFrom('"', "\\", "{", "}", "[", "]", ",", ":", "manifest", " ", "\n", "é", "😀"),
    )
    .map((parts) => parts.join("")),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    jsonish,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(jsonish, fc.constant("manifest")), tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("recordWithoutManifest", () => {
  it("cuts exactly the value's manifest member, wherever it stands, on random JSON", () => {
    fc.assert(
      fc.property(
        fc.dictionary(jsonish, json, { maxKeys: 4 }),
        json,
        fc.nat(5),
        fc.option(fc.integer({ min: 0 })),
        (members, manifest, at, expires) => {
          const entries = Object.entries(members).filter(([k]) => k !== "manifest");
          entries.splice(Math.min(at, entries.length), 0, ["manifest", manifest]);
          const value = Object.fromEntries(entries);
          const text = serializeRecord({ value, expires: expires ?? undefined });
          const cut = recordWithoutManifest(text);
          expect(cut).toBeDefined();
          const { manifest: _left, ...rest } = value;
          expect(JSON.parse(cut!)).toStrictEqual(
            JSON.parse(serializeRecord({ value: rest, expires: expires ?? undefined })),
          );
        },
      ),
      { numRuns: 400 },
    );
  });

  it("leaves a record without a manifest member as it is, and follows JSON whitespace", () => {
    fc.assert(
      fc.property(json, (generated) => {
        // As JSON.parse builds it (fast-check may make prototype-less objects).
        const value: unknown = JSON.parse(JSON.stringify(generated));
        const text = JSON.stringify({ value });
        const hasManifest =
          typeof value === "object" &&
          value !== null &&
          !Array.isArray(value) &&
          "manifest" in value;
        if (!hasManifest) expect(recordWithoutManifest(text)).toBe(text);
        const spaced = JSON.stringify({ expires: 5, value }, null, 2);
        const cut = recordWithoutManifest(spaced);
        expect(cut).toBeDefined();
        const parsed = JSON.parse(cut!) as { value: unknown };
        if (hasManifest) {
          const { manifest: _m, ...rest } = value as Record<string, unknown>;
          expect(parsed.value).toStrictEqual(rest);
        } else expect(parsed.value).toStrictEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it("answers undefined for texts whose structure it does not follow", () => {
    for (const text of [
      "",
      "[1]",
      '"value"',
      '{"value":{"manifest":{"a":[1}},"response":1}}',
      '{"value":{"manifest":"never closes}}',
      '{"value":{"manifest" {"a":1}}}',
      '{"value":{manifest:1}}',
      '{"value":{"manifest":]}}',
    ]) {
      expect(recordWithoutManifest(text)).toBeUndefined();
    }
  });
});
