/**
 * Bad input, cassettes: thousands of random and mutated cassette files
 * (bytes flipped, inserted, cut; lines dropped, repeated, swapped,
 * re-indented; values replaced by hostile YAML: tags, anchors and aliases,
 * merge keys, `__proto__`, deep nesting, alias bombs). Loading one either
 * succeeds with a cassette that is really valid, or fails with a
 * CassetteError that names the file. Never another error type, never a
 * hang, never prototype pollution; a file that failed to load is never
 * written over.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cassetteStore, emitCassette, encodeBinary } from "../../src/cassette/index.js";
import type { CassetteItem } from "../../src/cassette/item.js";
import { parseCassette } from "../../src/cassette/parse.js";
import { cassetteSource, decodeCassette } from "../../src/cassette/source.js";
import { CassetteError } from "../../src/errors.js";
import { manifestIdentity } from "../../src/identity/index.js";
import { invocationManifest, type JsonValue } from "../../src/index.js";
import { assertJsonValue } from "../../src/json/value.js";
import { type Entry, entryKey, validateEntry } from "../../src/store/index.js";
import { assertStoreKey } from "../../src/store/keys.js";
import { ROOT, tempDir } from "./helpers.js";

const dir = tempDir("fuzz-cassette");
const SRC = cassetteSource(join(dir, "fuzzed.yaml"));
/** Slowest acceptable load of one fuzzed file (the seeds load in about a millisecond). */
const MAX_CASE_MS = 2_000;

// ---- seeds: a generated cassette using every feature, and the committed ones ----

function entry(
  prompt: string,
  response: JsonValue,
  extra: { attempt?: number; occurrence?: number; namespace?: string; params?: JsonValue } = {},
): CassetteItem {
  const manifest = invocationManifest(
    {
      role: "builder",
      model: "gpt-5",
      prompt,
      task: "T-1",
      ...(extra.params === undefined ? {} : { params: extra.params as Record<string, JsonValue> }),
    },
    { homeDir: "/home/u", tmpDirs: ["/tmp"], attempt: extra.attempt ?? 0 },
  );
  const id = manifestIdentity(manifest);
  const occurrence = extra.occurrence ?? 0;
  const value: Entry = {
    v: 1,
    id,
    manifest,
    response,
    meta: {
      recordedAt: "2026-01-31T12:00:00.000Z",
      durationMs: 812.5,
      normalization: 1,
      invocacheVersion: "0.1.0",
      occurrence,
      attempt: manifest.attempt,
      ...(manifest.attempt > 0 ? { parent: "a".repeat(64) } : {}),
      ...(extra.attempt === 1
        ? {
            verdict: {
              verdict: "rejected" as const,
              reason: "no tests",
              at: "2026-01-31T12:00:01.000Z",
            },
          }
        : {}),
    },
  };
  return {
    key: entryKey(extra.namespace ?? "default", id, occurrence),
    value: value as unknown as JsonValue,
  };
}

const generated = emitCassette([
  entry("Plan the change to {project}/src/cli.ts: add a --json flag", {
    text: "1. Read the code\n2. Change it\n\n  indented: yes # not a comment\n",
    usage: { input_tokens: 23, output_tokens: 30 },
  }),
  entry(
    "Build it",
    {
      kind: "stream",
      events: [
        { t: 0, data: "1. " },
        { t: 12.5, data: "Read\n" },
      ],
    },
    { attempt: 1, params: { temperature: 0.2, tools: [{ name: "grep", strict: true }] } },
  ),
  entry("Again", { text: "second occurrence: 'quotes' \"and\" \\ back\tslash" }, { occurrence: 1 }),
  entry("Other namespace", { n: [1, -0.5, 1e21, null, true] }, { namespace: "team-a" }),
  { key: "default:run:nightly-42", value: { v: 1, runId: "nightly-42", calls: ["x:0"] } },
  {
    key: "blob",
    value: encodeBinary(new Uint8Array([0, 1, 2, 255]), "application/octet-stream") as never,
  },
  { key: "expiring", value: "soon", expires: Date.parse("2099-01-01T00:00:00.000Z") },
  {
    key: "__proto__",
    value: JSON.parse('{"__proto__": "just data", "constructor": {"prototype": 1}}'),
  },
]);

function committed(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".yaml")) out.push(readFileSync(join(d, e.name), "utf8"));
    }
  };
  walk(join(ROOT, "cassettes"));
  return out;
}

const SEEDS = [generated, ...committed()];

// ---- the oracle -----------------------------------------------------------------

const PROTOTYPES = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
const pristine = PROTOTYPES.map((p) => Object.getOwnPropertyNames(p).sort().join());

function assertNoPollution(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  for (const [i, p] of PROTOTYPES.entries()) {
    expect(Object.getOwnPropertyNames(p).sort().join()).toBe(pristine[i]);
  }
}

/** Every object in a loaded value is a plain object or array. */
function assertPlain(value: unknown, path: string): void {
  if (value === null || typeof value !== "object") return;
  const proto = Object.getPrototypeOf(value);
  expect(
    proto === Object.prototype || proto === Array.prototype,
    `${path} has an odd prototype`,
  ).toBe(true);
  for (const [k, v] of Object.entries(value)) assertPlain(v, `${path}.${k}`);
}

const outcomes = { valid: 0, refused: 0 };
let slowest = 0;

/**
 * Load `bytes` as a cassette. A load that succeeds must be a valid cassette
 * (checked items, re-emitted and re-read identically); a failure must be a
 * CassetteError naming the file with a sane position.
 */
function check(bytes: Uint8Array): void {
  const started = performance.now();
  try {
    let items: CassetteItem[];
    try {
      items = parseCassette(decodeCassette(bytes, SRC), SRC);
    } catch (error) {
      if (!(error instanceof CassetteError)) {
        throw new Error(`not a CassetteError: ${(error as Error)?.stack ?? String(error)}`);
      }
      expect(error.file).toBe(SRC.file);
      expect(error.code).toBe("ERR_CASSETTE");
      expect(error.message.startsWith(SRC.display)).toBe(true);
      for (const n of [error.line, error.column]) {
        if (n !== undefined) expect(Number.isSafeInteger(n) && n >= 1).toBe(true);
      }
      outcomes.refused++;
      return;
    }
    for (const item of items) {
      assertStoreKey(item.key, "key");
      assertJsonValue(item.value, "value");
      assertPlain(item.value, item.key);
      if (/^[^:]+:e:[0-9a-f]{64}:\d+$/.test(item.key)) validateEntry(item.value, item.key);
    }
    // (node's deep equality: vitest's mishandles an own "__proto__" member.)
    const again = parseCassette(emitCassette(items), SRC);
    expect(isDeepStrictEqual(again, items), "re-emitted cassette reads back the same").toBe(true);
    outcomes.valid++;
  } finally {
    slowest = Math.max(slowest, performance.now() - started);
    assertNoPollution();
  }
}

// ---- mutations --------------------------------------------------------------------

/** Hostile YAML to put where a value was. */
const HOSTILE = [
  "!!js/function 'function () { return 1 }'",
  "!!js/undefined ''",
  "!!binary aGk=",
  "!!set {a, b}",
  "!!omap [a: 1]",
  "!custom x",
  "&anchor value",
  "*undefined_alias",
  "{ <<: { polluted: 1 } }",
  "{ __proto__: { polluted: 1 } }",
  "{ constructor: { prototype: { polluted: 1 } } }",
  "[ __proto__, constructor ]",
  "{ ? [a, b] : 1 }",
  "{ 1: a, '1': b }",
  "{ true: 1, 'true': 2 }",
  "{ ~: 1 }",
  ".nan",
  "-.inf",
  "1e400",
  "123456789012345678901234567890",
  "0x1F",
  "0o17",
  "~",
  "null",
  "''",
  '"\\ud800"',
  '"\\x00\\u0007"',
  "|",
  ">-",
  "|+\n",
  "- a\n- b",
  "[",
  "{",
  '"unterminated',
  "'unterminated",
  "---",
  "...",
  "%YAML 1.1",
  "#",
  "? ",
  ": ",
  "\t",
  "\u0000",
  "\ufeff",
  `${"[".repeat(2000)}${"]".repeat(2000)}`,
  `${"{a: ".repeat(1000)}1${"}".repeat(1000)}`,
  "&a [1,1,1,1,1,1,1,1,1,1]",
  "[*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  `"${"x".repeat(20_000)}"`,
];

/** Hostile lines to insert (indented like their neighbour). */
const HOSTILE_LINES = [
  "__proto__: { polluted: 1 }",
  "__proto__:\n  polluted: 1",
  "constructor: { prototype: { polluted: 1 } }",
  "<<: *a",
  "<<: { polluted: 1 }",
  "&a anchored: 1",
  "!!js/object key: 1",
  "extra: field",
  "- stray list item",
  "? complex",
  "occurrence: 0",
  "attempt: 2",
  "v: 2",
  "invocache: 2",
  "entries: []",
  "values: {}",
];

type Mutation =
  | { kind: "flip"; at: number; byte: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "delete"; at: number; length: number }
  | { kind: "truncate"; at: number }
  | { kind: "copy"; from: number; length: number; to: number }
  | { kind: "dropLine"; line: number }
  | { kind: "dupLine"; line: number }
  | { kind: "swapLines"; a: number; b: number }
  | { kind: "indent"; line: number; change: number }
  | { kind: "replaceValue"; line: number; fragment: string }
  | { kind: "insertLine"; line: number; fragment: string };

const pos = fc.nat();
const fragment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant("flip" as const),
    at: pos,
    byte: fc.integer({ min: 0, max: 255 }),
  }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: pos,
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({
    kind: fc.constant("delete" as const),
    at: pos,
    length: fc.integer({ min: 1, max: 40 }),
  }),
  fc.record({ kind: fc.constant("truncate" as const), at: pos }),
  fc.record({
    kind: fc.constant("copy" as const),
    from: pos,
    length: fc.integer({ min: 1, max: 80 }),
    to: pos,
  }),
  fc.record({ kind: fc.constant("dropLine" as const), line: pos }),
  fc.record({ kind: fc.constant("dupLine" as const), line: pos }),
  fc.record({ kind: fc.constant("swapLines" as const), a: pos, b: pos }),
  fc.record({
    kind: fc.constant("indent" as const),
    line: pos,
    change: fc.integer({ min: -4, max: 4 }),
  }),
  fc.record({ kind: fc.constant("replaceValue" as const), line: pos, fragment }),
  fc.record({
    kind: fc.constant("insertLine" as const),
    line: pos,
    fragment: fc.oneof(fc.constantFrom(...HOSTILE_LINES), fragment),
  }),
);

function applyMutation(text: Buffer, m: Mutation): Buffer {
  const n = text.length;
  switch (m.kind) {
    case "flip": {
      if (n === 0) return text;
      const out = Buffer.from(text);
      out[m.at % n] = m.byte;
      return out;
    }
    case "insert": {
      const at = m.at % (n + 1);
      return Buffer.concat([text.subarray(0, at), m.bytes, text.subarray(at)]);
    }
    case "delete": {
      const at = m.at % (n + 1);
      return Buffer.concat([text.subarray(0, at), text.subarray(at + m.length)]);
    }
    case "truncate":
      return text.subarray(0, m.at % (n + 1));
    case "copy": {
      const from = m.from % (n + 1);
      const to = m.to % (n + 1);
      const piece = text.subarray(from, from + m.length);
      return Buffer.concat([text.subarray(0, to), piece, text.subarray(to)]);
    }
    default:
      return Buffer.from(lineMutation(text.toString("latin1"), m), "latin1");
  }
}

/** Line mutations work on latin1 text so that every byte survives the round trip. */
function lineMutation(text: string, m: Mutation): string {
  const lines = text.split("\n");
  const at = (i: number) => i % lines.length;
  const indentOf = (line: string) => /^[ -]*/.exec(line)![0].replace(/-/g, " ");
  switch (m.kind) {
    case "dropLine":
      lines.splice(at(m.line), 1);
      break;
    case "dupLine":
      lines.splice(at(m.line), 0, lines[at(m.line)]!);
      break;
    case "swapLines": {
      const a = at(m.a);
      const b = at(m.b);
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      break;
    }
    case "indent": {
      const i = at(m.line);
      const line = lines[i]!;
      lines[i] =
        m.change > 0
          ? " ".repeat(m.change) + line
          : m.change < 0
            ? line.replace(new RegExp(`^ {0,${-m.change}}`), "")
            : `\t${line}`;
      break;
    }
    case "replaceValue": {
      const keyed = lines
        .map((line, i) => [line, i] as const)
        .filter(([line]) => /^\s*(- )?[^\s:#][^:]*:( |$)/.test(line));
      if (keyed.length === 0) break;
      const [line, i] = keyed[m.line % keyed.length]!;
      const colon = line.indexOf(": ") >= 0 ? line.indexOf(": ") : line.length - 1;
      lines[i] = `${line.slice(0, colon)}: ${Buffer.from(m.fragment).toString("latin1")}`;
      break;
    }
    case "insertLine": {
      const i = at(m.line);
      const indent = indentOf(lines[i]!);
      const inserted = Buffer.from(m.fragment)
        .toString("latin1")
        .split("\n")
        .map((l) => indent + l);
      lines.splice(i, 0, ...inserted);
      break;
    }
    default:
      break;
  }
  return lines.join("\n");
}

const mutated = fc.record({
  seed: fc.nat({ max: SEEDS.length - 1 }),
  mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
});

function build({ seed, mutations }: { seed: number; mutations: Mutation[] }): Buffer {
  return mutations.reduce<Buffer>((text, m) => applyMutation(text, m), Buffer.from(SEEDS[seed]!));
}

// ---- the properties -----------------------------------------------------------

describe("fuzzed cassette files", () => {
  beforeAll(() => {
    // The seeds themselves are valid cassettes.
    for (const seed of SEEDS) check(Buffer.from(seed));
    outcomes.valid = 0;
    outcomes.refused = 0;
  });
  afterAll(() => {
    console.log(
      `fuzzed cassettes: ${outcomes.valid} loaded as valid, ${outcomes.refused} refused with CassetteError; slowest load ${slowest.toFixed(1)} ms`,
    );
  });

  it("mutated cassettes (bytes, lines, YAML structure): a valid load or a CassetteError, nothing else, no pollution, no hang", () => {
    const before = { ...outcomes };
    fc.assert(
      fc.property(mutated, (m) => check(build(m))),
      { numRuns: 2_000, seed: 20_260_131 },
    );
    // The mutations exercise both outcomes: most files break, some still load.
    expect(outcomes.valid - before.valid).toBeGreaterThan(60);
    expect(outcomes.refused - before.refused).toBeGreaterThan(1_200);
    expect(slowest).toBeLessThan(MAX_CASE_MS);
  }, 60_000);

  it("random bytes and text, with and without the header: a valid load or a CassetteError", () => {
    const header = fc.constantFrom(
      "",
      "invocache: 1\n",
      "invocache: 1\nentries:\n",
      "\ufeffinvocache: 1\nentries: []\n",
    );
    fc.assert(
      fc.property(
        header,
        fc.oneof(
          fc.uint8Array({ maxLength: 2_000 }),
          fc.string({ unit: "binary", maxLength: 500 }).map((s) => Buffer.from(s)),
          fc
            .string({
              unit: fc.constantFrom(
                "-",
                " ",
                ":",
                "\n",
                "[",
                "]",
                "{",
                "}",
                "&a",
                "*a",
                "!",
                "|",
                "?",
                "k",
                "1",
                "#",
                '"',
              ),
              maxLength: 200,
            })
            .map((s) => Buffer.from(s)),
        ),
        (head, body) => check(Buffer.concat([Buffer.from(head), body])),
      ),
      { numRuns: 2_000, seed: 424_242 },
    );
    expect(slowest).toBeLessThan(MAX_CASE_MS);
  }, 60_000);

  it("through cassetteStore on disk: a file that fails to load is refused by every operation and never written over", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(mutated, async (m) => {
        const bytes = build(m);
        const path = join(dir, `store-${n++}.yaml`);
        writeFileSync(path, bytes);
        const store = cassetteStore(path, { parseCache: false });
        try {
          const listed = await (async () => {
            const keys: string[] = [];
            for await (const [key] of store.list("")) keys.push(key);
            return keys;
          })().then(
            (keys) => ({ keys }),
            (error: unknown) => ({ error }),
          );
          if ("error" in listed) {
            expect(listed.error).toBeInstanceOf(CassetteError);
            // An item whose value or id fails its check is refused when served
            // (listing serves them all), not on load: another key still reads.
            // `usage` reads keys only, so it fails exactly when the load does.
            const loadFails = await store.usage().then(
              () => false,
              () => true,
            );
            if (loadFails) await expect(store.get("k")).rejects.toBeInstanceOf(CassetteError);
            await expect(store.set("k", 1)).rejects.toBeInstanceOf(CassetteError);
            expect(readFileSync(path).equals(bytes)).toBe(true);
          } else {
            for (const key of listed.keys) expect(await store.get(key)).toBeDefined();
          }
        } finally {
          await store.close().catch(() => undefined);
        }
        assertNoPollution();
      }),
      { numRuns: 120, seed: 7 },
    );
  }, 60_000);
});

describe("cassette loading is exact", () => {
  // A cassette means exactly what it says or it is refused: two distinct YAML
  // keys that would become one JavaScript property must not merge silently
  // (the last one winning), and a collection key must not load as its
  // stringified form.
  it("keys that would collide once converted (1 and '1', true and 'true') are a CassetteError", () => {
    for (const map of ["{ 1: a, '1': b }", "{ true: 1, 'true': 2 }", "{ 1.0: x, '1': y }"]) {
      const text = `invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: ${map}\n`;
      expect(() => parseCassette(text, SRC), map).toThrow(CassetteError);
    }
  });

  it("a collection used as a mapping key is a CassetteError", () => {
    const text = "invocache: 1\nentries: []\nvalues:\n  - key: k\n    value: { ? [a, b] : 1 }\n";
    expect(() => parseCassette(text, SRC)).toThrow(CassetteError);
  });
});
