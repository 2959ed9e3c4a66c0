/**
 * Exact round trips: every value written to a cassette comes back equal,
 * every string byte for byte (property tests with fast-check), and the YAML
 * reads the way the docs promise (block scalars, stable layout).
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emitCassette } from "../../src/cassette/emit.js";
import type { CassetteItem } from "../../src/cassette/item.js";
import { parseCassette } from "../../src/cassette/parse.js";
import { manifestIdentity } from "../../src/identity/identity.js";
import { entryKey } from "../../src/store/envelope.js";
import { modelOf } from "../helpers/model-manifest.js";
import { jsonValue, makeEntry, trickyString } from "./helpers.js";

const src = { file: "/x/t.yaml", display: "t.yaml", url: "cassette://t.yaml" };

function roundTrip(items: CassetteItem[]): CassetteItem[] {
  return parseCassette(emitCassette(items), src);
}

describe("cassette round trip", () => {
  it("returns every string exactly, in entries (prompt, task, response) and values", () => {
    fc.assert(
      fc.property(
        trickyString,
        trickyString,
        trickyString,
        fc.nat(80),
        (prompt, task, text, pad) => {
          const { entry } = makeEntry("p", {
            text,
            list: [text, { text }, { t: 1, data: text }],
          });
          // Bypass normalization: the manifest holds the string as given.
          modelOf(entry.manifest).prompt = `${"x".repeat(pad)}${prompt}`; // long ones are forced to blocks
          entry.manifest.task = `${task}${" ".repeat(pad % 3)}`;
          // The id is the identity of the manifest as stored (loading checks it).
          entry.id = manifestIdentity(entry.manifest);
          const key = entryKey("default", entry.id, 0);
          const items = [
            { key, value: entry as never },
            { key: "ns:run:r", value: { text, [text]: text } },
          ];
          const back = roundTrip(items);
          expect(back).toStrictEqual(items);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("returns every JSON value exactly (keys of any shape, numbers, nesting)", () => {
    fc.assert(
      fc.property(jsonValue, fc.integer({ min: 0, max: 1e15 }), (value, expires) => {
        const items = [
          { key: "k:1", value },
          { key: "k:2", value, expires },
        ];
        expect(roundTrip(items)).toStrictEqual(items);
      }),
      { numRuns: 800 },
    );
  });

  it("keeps numbers exact: extremes, negatives, big integers", () => {
    const value = [
      0,
      -1.5,
      2 ** 53 - 1,
      -(2 ** 53),
      1e308,
      5e-324,
      0.1,
      1e21,
      123456789012345680000,
      1.7976931348623157e308,
    ];
    expect(roundTrip([{ key: "n", value }])[0]!.value).toStrictEqual(value);
  });

  it("writes multi-line strings as literal block scalars, and 1,000 of them come back unchanged", () => {
    // The issue measured yaml's default folding changing 100 of 1,000 such
    // strings; literal blocks with lineWidth 0 (and quoted fallbacks) change none.
    const strings = fc.sample(
      fc
        .array(fc.string({ unit: "grapheme-ascii", minLength: 0, maxLength: 120 }), {
          minLength: 2,
          maxLength: 8,
        })
        .map((lines) => lines.join("\n")),
      { numRuns: 1000, seed: 42 },
    );
    const items = strings.map((s, i) => ({ key: `s:${i}`, value: s }));
    const text = emitCassette(items);
    expect(roundTrip(items)).toStrictEqual(items);
    expect(text.match(/value: \|/g)?.length).toBeGreaterThan(900);
  });

  it("reads well: header, fields in order, prompt as a block, no meta duplicates", () => {
    const { key, entry } = makeEntry(
      "Plan the change to src/app.ts.\n\tThen build it and run the tests.\n",
      {
        kind: "stream",
        events: [
          { t: 0, data: "Hel" },
          { t: 12.5, data: "lo, world" },
        ],
      },
    );
    const text = emitCassette([{ key, value: entry as never }]);
    expect(text).toBe(
      [
        "invocache: 1",
        "entries:",
        `  - id: ${entry.id}`,
        "    occurrence: 0",
        "    manifest:",
        "      role: builder",
        "      model: gpt-5",
        "      attempt: 0",
        "      inputs: []",
        "      task: T-1",
        "      prompt: |-",
        "        Plan the change to src/app.ts. Then build it and run the tests.",
        "    response:",
        "      kind: stream",
        "      events:",
        "        - { t: 0, data: Hel }",
        '        - { t: 12.5, data: "lo, world" }',
        "    meta:",
        "      recordedAt: 2026-01-31T12:00:00.000Z",
        "      durationMs: 812.5",
        "      normalization: 1",
        "      invocacheVersion: 0.1.0",
        "",
      ].join("\n"),
    );
  });

  it("keeps a __proto__ key a plain key, in both directions", () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const back = roundTrip([{ key: "p", value }])[0]!.value as Record<string, unknown>;
    expect(Object.keys(back)).toStrictEqual(["__proto__", "a"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
  });
});
