/**
 * meta.usage in the entry envelope and in cassettes: a valid usage round
 * trips through a cassette file that the JSON Schema accepts; a malformed
 * one is refused with the field named.
 */

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { emitCassette, parseCassette } from "../../src/cassette/index.js";
import { validateEntry } from "../../src/store/envelope.js";
import type { JsonValue } from "../../src/store/types.js";
import type { Usage } from "../../src/usage/extract.js";
import { makeEntry } from "../cassette/helpers.js";
import { validate } from "../cassette/json-schema.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const schema = JSON.parse(readFileSync(join(root, "docs", "cassette-v1.schema.json"), "utf8"));
const src = { file: "/x/t.yaml", display: "t.yaml", url: "cassette://t.yaml" };
const usage = {
  shape: "anthropic.messages",
  inputTokens: 120,
  outputTokens: 30,
  cacheReadTokens: 100,
  model: "claude-sonnet-4-5",
};

describe("meta.usage", () => {
  it("round trips through a cassette, right after durationMs, and the schema accepts it", () => {
    const { key, entry } = makeEntry("plan", { ok: true });
    entry.meta.usage = usage as Usage;
    const text = emitCassette([{ key, value: entry as unknown as JsonValue }]);
    expect(text).toMatch(/durationMs: 812\.5\n {6}usage:\n {8}shape: anthropic\.messages/);
    expect(validate(schema, parse(text, { version: "1.2" }))).toStrictEqual([]);
    const [item] = parseCassette(text, src);
    expect((item!.value as { meta: { usage: unknown } }).meta.usage).toStrictEqual(usage);
  });

  it("a malformed usage is refused, naming the field and what it must be", () => {
    const bad: [unknown, RegExp][] = [
      [{ ...usage, inputTokens: -1 }, /\$\.meta\.usage.*inputTokens must be an integer >= 0/],
      [{ ...usage, shape: "guess" }, /\$\.meta\.usage.*shape must be one of/],
      [{ ...usage, dollars: 3 }, /\$\.meta\.usage.*unknown field "dollars"/],
      [[], /\$\.meta\.usage.*must be an object/],
    ];
    for (const [value, message] of bad) {
      const { entry } = makeEntry("plan", { ok: true });
      const raw = { ...entry, meta: { ...entry.meta, usage: value } };
      expect(() => validateEntry(raw as unknown as JsonValue, "k")).toThrow(message);
    }
  });
});
