/**
 * docs/cassette-v1.schema.json describes what the loader accepts: every
 * committed cassette and every cassette we write validates against it, and
 * the broken ones the loader refuses, it refuses too.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { emitCassette, parseCassette, readCassette } from "../../src/cassette/index.js";
import { jsonValue, makeEntry, trickyString } from "./helpers.js";
import { validate } from "./json-schema.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const schema = JSON.parse(
  readFileSync(join(root, "docs", "cassette-v1.schema.json"), "utf8"),
) as Record<string, unknown>;
const yaml = (text: string) =>
  parse(text, { version: "1.2", schema: "core", merge: false }) as unknown;
const src = { file: "/x/t.yaml", display: "t.yaml", url: "cassette://t.yaml" };

function committedCassettes(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) out.push(p);
    }
  };
  walk(join(root, "cassettes"));
  return out;
}

describe("the cassette JSON Schema", () => {
  it("is a 2020-12 schema for format 1", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect((schema.properties as { invocache: unknown }).invocache).toStrictEqual({
      description: expect.any(String),
      const: 1,
    });
  });

  const committed = committedCassettes();
  it("there are committed cassettes to check", () => {
    expect(committed.length).toBeGreaterThan(0);
  });
  it.each(committed.map((p) => [p.slice(root.length + 1), p]))(
    "%s validates and loads",
    async (_rel, path) => {
      expect(validate(schema, yaml(readFileSync(path, "utf8")))).toStrictEqual([]);
      await readCassette(path);
    },
  );

  it("every cassette we write validates", () => {
    fc.assert(
      fc.property(trickyString, jsonValue, fc.nat(3), (prompt, response, occurrence) => {
        const { key, entry } = makeEntry(prompt, response, {
          occurrence,
          attempt: occurrence,
          namespace: occurrence === 2 ? "ns2" : "default",
        });
        if (occurrence === 3)
          entry.meta.verdict = { verdict: "rejected", reason: prompt, at: "2026-02-01T00:00:00Z" };
        const text = emitCassette([
          {
            key,
            value: entry as never,
            ...(occurrence === 1 ? { expires: 1_900_000_000_000 } : {}),
          },
          { key: "default:run:r", value: response },
        ]);
        expect(validate(schema, yaml(text))).toStrictEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("rejects what the loader rejects", () => {
    const { key, entry } = makeEntry("p", { ok: true });
    const good = emitCassette([{ key, value: entry as never }]);
    const broken = [
      good.replace("invocache: 1", "invocache: 2"),
      good.replace("invocache: 1\n", ""),
      good.replace(`id: ${entry.id}`, "id: not-hex"),
      good.replace("occurrence: 0", "occurrence: -1"),
      good.replace("    meta:\n", "    meta:\n      occurrence: 0\n"),
      good.replace("      durationMs: 812.5\n", ""),
      good.replace("durationMs: 812.5", "durationMs: .inf"),
      good.replace("      role: builder\n", ""),
      `${good}extra: []\n`,
      `${good}values:\n  - value: 1\n`,
    ];
    for (const text of broken) {
      expect(validate(schema, yaml(text)), text).not.toStrictEqual([]);
      expect(() => parseCassette(text, src), text).toThrow();
    }
  });
});
