/**
 * Bad input, identities: arbitrary strings, objects and option bags thrown
 * at normalizePrompt and invocationIdentity. Either a result or a
 * documented TypeError/RangeError, nothing else; the same input always
 * gives the same result; normalizing twice changes nothing; the caller's
 * objects are never modified and no prototype is polluted.
 * (test/normalize/properties.test.ts and test/identity/identity.test.ts
 * hold the laws on well-formed input; these are the hostile inputs.)
 */
import { inspect } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  type NormalizeOptions,
  normalizePrompt,
} from "../../src/index.js";

/** Pieces the rules care about, so that roots, UUIDs and timestamps collide often. */
const PIECES = [
  "/work/run-7",
  "/work/run-7/src",
  "/home/u",
  "/home/u2",
  "/tmp",
  "/tmp/x",
  "C:\\Users\\Me",
  "c:/users/me",
  "\\\\server\\share",
  "/",
  "//",
  "\\",
  ".",
  "..",
  "-",
  ":",
  "_",
  "T",
  "Z",
  " ",
  "\n",
  "\t",
  "\u00a0",
  "\u2028",
  "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "3f2504e04f8911d39a0c0305e82c3301",
  "2026-09-09T14:33:21Z",
  "2026-09-09T14:33:21.123+05:30",
  "1767225600000",
  "{project}",
  "{home}",
  "{tmp}",
  "{uuid}",
  "{timestamp}",
  "{secret:X}",
  "é",
  "e\u0301",
  "\ud800",
  "\udfff",
  "\ud83d\ude00",
  "\u0000",
  "\ufeff",
];

const text = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }).map((a) => a.join("")),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 100 }),
);

/** Anything at all, including what JSON cannot hold. */
const anything = fc.anything({
  maxDepth: 3,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  withUnicodeString: true,
});

const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: arb },
    { weight: 1, arbitrary: anything },
  );

const path = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 4 }).map((a) => a.join("")),
  fc.constantFrom("/work/run-7", "/home/u", "/tmp", "/", "", "C:\\", "relative/dir"),
);

/** Pieces without lone surrogates: one in a secret's value is the URIError reported at the end. */
const WELL_FORMED = PIECES.filter((p) => p.isWellFormed());

/** The `secret` rule's setting: off, an environment of its own (values made of rule pieces), or junk. */
const secrets = maybe(
  fc.oneof(
    fc.constant(false as const),
    fc.record(
      {
        env: fc.dictionary(
          fc.constantFrom("MY_API_KEY", "GH_TOKEN", "HOME", "DB_PASSWORD", "AUTHORIZATION"),
          fc.oneof(
            fc
              .array(
                fc.constantFrom(
                  ...WELL_FORMED,
                  "{secret:",
                  "secret:MY_API_KEY}",
                  "sk-proj-",
                  "AKIA",
                ),
                {
                  maxLength: 6,
                },
              )
              .map((a) => a.join("")),
            fc.string({ unit: "grapheme", maxLength: 40 }),
          ),
          { maxKeys: 3 },
        ),
        patterns: fc.constantFrom(undefined, []),
        allowNames: fc.constantFrom(undefined, ["HOME"], []),
      },
      { requiredKeys: ["env"] },
    ),
  ),
);

/** Normalization options, well-formed and not. */
const normalizeOptions: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: anything },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        projectPath: maybe(fc.oneof(path, fc.constant(null))),
        homeDir: maybe(path),
        tmpDirs: maybe(fc.array(path, { maxLength: 3 })),
        roots: maybe(
          fc.dictionary(
            fc.oneof(
              fc.constantFrom("cache", "ci", "project", "tmp", "9bad", "a:b", ""),
              fc.string({ maxLength: 6 }),
            ),
            path,
            { maxKeys: 3 },
          ),
        ),
        secrets,
      },
      { requiredKeys: [] },
    ),
  },
);

const KNOWN = new Set(["TypeError", "RangeError"]);

/** Run `fn`; a throw must be a documented TypeError/RangeError. */
function outcome<T>(fn: () => T): { value: T } | { error: string } {
  try {
    return { value: fn() };
  } catch (error) {
    const name = (error as Error)?.constructor?.name;
    if (!KNOWN.has(name)) {
      throw new Error(`undocumented ${name}: ${(error as Error)?.stack ?? String(error)}`);
    }
    expect((error as Error).message.length).toBeGreaterThan(10); // says what was wrong
    return { error: name };
  }
}

/** A structured clone, or undefined when the value cannot be cloned. */
function copy<T>(value: T): T | undefined {
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

/** A deep snapshot of a value, prototypes included, to tell whether a call modified it. */
function snapshot(value: unknown): string {
  return inspect(value, {
    depth: null,
    showHidden: true,
    maxArrayLength: null,
    maxStringLength: null,
  });
}

function assertNoPollution(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).length).toBe(PRISTINE);
}
const PRISTINE = Object.getOwnPropertyNames(Object.prototype).length;

describe("normalizePrompt on hostile input", () => {
  it("any text with any options: a string or a TypeError/RangeError; deterministic, idempotent, options untouched", () => {
    let normalized = 0;
    fc.assert(
      fc.property(
        fc.oneof({ weight: 8, arbitrary: text }, { weight: 1, arbitrary: anything }),
        normalizeOptions,
        (input, opts) => {
          const before = snapshot([input, opts]);
          const first = outcome(() => normalizePrompt(input as string, opts as NormalizeOptions));
          expect(snapshot([input, opts]), "input or options were modified").toBe(before);
          const second = outcome(() => normalizePrompt(input as string, opts as NormalizeOptions));
          expect(second).toStrictEqual(first); // deterministic, errors included
          if ("value" in first) {
            normalized++;
            expect(typeof first.value).toBe("string");
            expect(first.value).toBe(first.value.trim());
            expect(normalizePrompt(first.value, opts as NormalizeOptions)).toBe(first.value);
          }
          assertNoPollution();
        },
      ),
      { numRuns: 3_000, seed: 1_729 },
    );
    expect(normalized).toBeGreaterThan(900); // many cases get through to the rules
  });
});

/** Requests: well-formed with hostile text, the right shape with hostile field values, or anything. */
const request: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: anything },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        role: fc.string({ unit: "binary", minLength: 1, maxLength: 10 }),
        prompt: text,
        model: fc.oneof(fc.string({ unit: "binary", maxLength: 10 }), fc.constant(null)),
        task: fc.oneof(text, fc.constant(null)),
        projectPath: fc.oneof(fc.constantFrom("/work/run-7", "/tmp/x"), fc.constant(null)),
        params: fc.dictionary(
          fc.string({ unit: "binary", maxLength: 8 }),
          fc.jsonValue({ maxDepth: 3 }),
          { maxKeys: 5 },
        ),
      },
      { requiredKeys: ["role", "prompt"] },
    ),
  },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        role: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom("planner", "builder", "r") },
          { weight: 1, arbitrary: anything },
        ),
        prompt: fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: anything }),
        model: maybe(fc.oneof(fc.string({ maxLength: 10 }), fc.constant(null))),
        task: maybe(fc.oneof(text, fc.constant(null))),
        projectPath: maybe(fc.oneof(path, fc.constant(null))),
        params: maybe(
          fc.oneof(
            fc.dictionary(
              fc.string({ unit: "binary", maxLength: 8 }),
              fc.jsonValue({ maxDepth: 3 }),
              { maxKeys: 5 },
            ),
            fc.dictionary(fc.constantFrom("__proto__", "constructor", "toJSON", "a"), anything, {
              maxKeys: 3,
            }),
          ),
        ),
        cwd: maybe(fc.string()),
        sessionId: maybe(fc.uuid()),
      },
      { requiredKeys: ["role", "prompt"] },
    ),
  },
);

const identityOptions: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: anything },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        attempt: maybe(fc.oneof(fc.nat({ max: 5 }), fc.constantFrom(-1, 1.5, Number.NaN, 2 ** 53))),
        inputArtifactHashes: maybe(
          fc.array(fc.oneof(fc.string({ maxLength: 12 }), anything), { maxLength: 4 }),
        ),
        homeDir: maybe(path),
        tmpDirs: maybe(fc.array(path, { maxLength: 2 })),
        secrets,
      },
      { requiredKeys: [] },
    ),
  },
);

describe("invocationIdentity on hostile input", () => {
  it("any request with any options: 64 hex or a TypeError/RangeError; deterministic, idempotent, inputs untouched", () => {
    let identified = 0;
    fc.assert(
      fc.property(request, identityOptions, (req, opts) => {
        const before = snapshot([req, opts]);
        const r = req as InvocationRequest;
        const o = opts as IdentityOptions;
        const first = outcome(() => invocationIdentity(r, o));
        expect(snapshot([req, opts]), "request or options were modified").toBe(before);
        // Deterministic: again, and on a structured copy of the same input.
        expect(outcome(() => invocationIdentity(r, o))).toStrictEqual(first);
        const reqCopy = copy(req);
        const optsCopy = copy(opts);
        if (reqCopy !== undefined && optsCopy !== undefined) {
          expect(
            outcome(() =>
              invocationIdentity(reqCopy as InvocationRequest, optsCopy as IdentityOptions),
            ),
          ).toStrictEqual(first);
        }
        if ("value" in first) {
          identified++;
          expect(first.value).toMatch(/^[0-9a-f]{64}$/);
          // Idempotent: the request rebuilt from its own manifest (already
          // normalized) has the same identity.
          const m = invocationManifest(r, o);
          const again = invocationIdentity(
            {
              role: m.role,
              prompt: m.prompt,
              task: m.task,
              model: m.model,
              ...(m.params === undefined ? {} : { params: m.params }),
            },
            { ...o, attempt: m.attempt, inputArtifactHashes: m.inputs },
          );
          expect(again).toBe(first.value);
        }
        assertNoPollution();
      }),
      { numRuns: 3_000, seed: 31_337 },
    );
    expect(identified).toBeGreaterThan(450); // many cases get through to a hash
  });
});

describe("the secret rule on hostile settings (reported)", () => {
  // Fixed: a secret env value holding a lone surrogate makes every
  // normalization throw URIError ("URI malformed"): the scanner renders the
  // value URL-encoded with encodeURIComponent (src/secrets/forms.ts,
  // renderForm "url"), which refuses lone surrogates. normalizePrompt and
  // invocationIdentity document TypeError/RangeError only, and createRecorder
  // / cassette writes with such an env throw the same way. (process.env
  // itself cannot hold one on Linux; a `secrets: { env }` option can.)
  it("an env value with a lone surrogate is a TypeError or is scanned, never a URIError", () => {
    const secrets = { env: { MY_API_KEY: "/work/run-7\ud800" } };
    expect(outcome(() => normalizePrompt("", { secrets }))).toBeDefined();
    expect(outcome(() => invocationIdentity({ role: "r", prompt: "" }, { secrets }))).toBeDefined();
  });
});

describe("the secret rule and idempotence (reported)", () => {
  // Fixed (values with braces are not key material): when a secret's value is part of its own
  // placeholder text (MY_API_KEY="MY_API_KEY}" or "{secret:"), normalizing
  // the output again replaces inside the placeholder:
  // "a {secret:MY_API_KEY} b" becomes "a {secret:{secret:MY_API_KEY} b".
  // normalizePrompt documents idempotence.
  it("normalizing twice changes nothing, whatever the secret values", () => {
    for (const value of ["{secret:", "secret:MY_API_KEY}", "MY_API_KEY}", ":MY_API_KEY"]) {
      const opts = {
        secrets: { env: { MY_API_KEY: value } },
        homeDir: "/home/u",
        tmpDirs: ["/tmp"],
      };
      const once = normalizePrompt(`a ${value} b`, opts);
      expect(normalizePrompt(once, opts), JSON.stringify(value)).toBe(once);
    }
  });
});
