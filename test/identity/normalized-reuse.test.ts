/**
 * Cross-call reuse of normalized strings (src/identity/normalized-reuse.ts)
 * must never change an identity: the same sequence of calls gives the same
 * identities with reuse on and off, whatever changes between calls (roots,
 * rules turned off, caller rules changed in place, the environment's
 * secrets), and the cache keeps to its bound.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/errors.js";
import {
  clearNormalizationReuse,
  configureNormalizationReuse,
  DEFAULT_REUSE_BYTES,
  manifestIdentity,
  normalizationReuseStats,
} from "../../src/identity/index.js";
import {
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
  normalizePrompt,
} from "../../src/index.js";
import { refreshSecretEnv } from "../../src/normalize/index.js";
import type { NormalizationRule } from "../../src/normalize/rules.js";

const SECRET_ENV = "REUSE_TEST_API_KEY";
const SECRETS = ["sk-live-Zq9Xv8Wu7Ts6", "sk-live-Ab1Cd2Ef3Gh4"];

afterEach(() => {
  configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
  clearNormalizationReuse();
  delete process.env[SECRET_ENV];
  refreshSecretEnv();
});

const piece = fc.constantFrom(
  "/work/run-7/src/a.ts",
  "/work/run-8/src/a.ts",
  "/home/u/.cache",
  "/var/cache/ci/x",
  "/tmp/t-1",
  "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "2026-09-09T10:00:00Z",
  "1757412000000",
  "JIRA-42",
  "  \n\t ",
  "hello",
  "é",
  "\u00e9",
  "\ud800",
  ...SECRETS,
);
const text = fc.array(piece, { maxLength: 12 }).map((p) => p.join(" "));
/** Mostly short texts; now and then one past the long-key length (keyed by digest). */
const message = fc.oneof(
  { weight: 8, arbitrary: text },
  {
    weight: 1,
    arbitrary: fc.tuple(text, fc.nat(3)).map(([t, n]) => `${t}${"x/work/run-7 ".repeat(1400)}${n}`),
  },
);

/** What may change before a call. */
const setting = fc.record({
  projectPath: fc.constantFrom("/work/run-7", "/work/run-8", undefined),
  cacheRoot: fc.constantFrom("/var/cache/ci", "/var/cache", undefined),
  disable: fc.constantFrom(undefined, ["uuid"], ["timestamp", "whitespace"], ["root:project"]),
  /** A caller rule whose replacement is changed in place (same objects). */
  replacement: fc.constantFrom("{ticket}", "{t}", undefined),
  /** The environment's secret value (undefined: unset), then refreshSecretEnv. */
  secret: fc.constantFrom(undefined, ...SECRETS),
  secretsOff: fc.boolean(),
  /** Params whose members sort around the prompt, one spelled like it. */
  params: fc.boolean(),
});
type Setting = typeof setting extends fc.Arbitrary<infer T> ? T : never;

const step = fc.record({ add: fc.array(message, { minLength: 1, maxLength: 3 }), setting });

/** Run a sequence of calls on a growing conversation; the identities and prompts it gives. */
function runSequence(steps: { add: string[]; setting: Setting }[]): string[] {
  const rule: NormalizationRule = { name: "ticket", pattern: /JIRA-\d+/g, replacement: "" };
  const rules = [rule];
  const messages: { role: string; content: string }[] = [{ role: "system", content: "sys" }];
  const out: string[] = [];
  for (const { add, setting: s } of steps) {
    for (const content of add)
      messages.push({ role: messages.length % 2 === 0 ? "assistant" : "user", content });
    if (s.secret === undefined) delete process.env[SECRET_ENV];
    else process.env[SECRET_ENV] = s.secret;
    refreshSecretEnv();
    if (s.replacement !== undefined) rule.replacement = s.replacement;
    const req: InvocationRequest = {
      role: "builder",
      conversation: { messages },
      projectPath: s.projectPath,
      task: messages[1]?.content ?? "",
    };
    const opts: IdentityOptions = {
      homeDir: "/home/u",
      tmpDirs: ["/tmp"],
      ...(s.cacheRoot === undefined ? {} : { roots: { cache: s.cacheRoot } }),
      ...(s.disable === undefined ? {} : { disableRules: s.disable }),
      ...(s.replacement === undefined ? {} : { rules }),
      ...(s.secretsOff ? { secrets: false as const } : {}),
    };
    if (s.params) req.params = { prompt: "", zz: { prompt: "" }, temperature: 0.2 };
    const id = invocationIdentity(req, opts);
    const manifest = invocationManifest(req, opts);
    // The general path (a plain copy of the manifest carries no escaped pieces).
    expect(id).toBe(manifestIdentity({ ...manifest }));
    out.push(id, manifest.prompt);
  }
  return out;
}

describe("normalization reuse across calls", () => {
  it("gives the identities no reuse gives, over random conversations and option changes", () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(DEFAULT_REUSE_BYTES, 4096, 40_000),
        (steps, bound) => {
          configureNormalizationReuse({ maxBytes: 0 });
          const without = runSequence(steps);
          configureNormalizationReuse({ maxBytes: bound });
          clearNormalizationReuse();
          const withReuse = runSequence(steps);
          const again = runSequence(steps); // everything already kept
          expect(withReuse).toEqual(without);
          expect(again).toEqual(without);
          expect(normalizationReuseStats().bytes).toBeLessThanOrEqual(bound);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("reuses earlier messages on the next turn and keeps each string's own output", () => {
    clearNormalizationReuse();
    const opts = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
    const messages: { role: string; content: string }[] = [];
    for (let t = 0; t < 5; t++) {
      messages.push({ role: "user", content: `turn ${t} at /work/p/f${t}.ts` });
      invocationIdentity({ role: "r", conversation: messages, projectPath: "/work/p" }, opts);
    }
    const stats = normalizationReuseStats();
    // Turn t finds every earlier content and the role "user" kept.
    expect(stats.hits).toBeGreaterThanOrEqual(10);
    const prompt = invocationManifest(
      { role: "r", conversation: messages, projectPath: "/work/p" },
      opts,
    ).prompt;
    expect(prompt).toContain('"turn 4 at {project}/f4.ts"');
    // Another project: the same strings are normalized anew, not served from the first.
    const other = invocationManifest(
      { role: "r", conversation: messages, projectPath: "/work/q" },
      opts,
    ).prompt;
    expect(other).toContain('"turn 4 at /work/p/f4.ts"');
    expect(normalizePrompt("turn 4 at /work/p/f4.ts", { ...opts, projectPath: "/work/q" })).toBe(
      "turn 4 at /work/p/f4.ts",
    );
  });

  it("serves a caller rule changed in place by its new replacement", () => {
    const rule: NormalizationRule = { name: "t", pattern: /JIRA-\d+/g, replacement: "{a}" };
    const req = { role: "r", conversation: [{ content: "see JIRA-1" }] };
    const first = invocationManifest(req, { rules: [rule] }).prompt;
    rule.replacement = "{b}";
    const second = invocationManifest(req, { rules: [rule] }).prompt;
    expect(first).toContain("see {a}");
    expect(second).toContain("see {b}");
  });

  it("redacts a secret the environment gained after the text was first kept", () => {
    const req = { role: "r", conversation: [{ content: `key ${SECRETS[0]}` }] };
    delete process.env[SECRET_ENV];
    refreshSecretEnv();
    // sk-live-… is also a known key shape: the name shows which rule took it.
    const before = invocationManifest(req).prompt;
    process.env[SECRET_ENV] = SECRETS[0];
    refreshSecretEnv();
    const after = invocationManifest(req).prompt;
    expect(after).toContain(`{secret:${SECRET_ENV}}`);
    expect(before).not.toContain(`{secret:${SECRET_ENV}}`);
  });

  it("keeps to its bound, and 0 turns it off", () => {
    configureNormalizationReuse({ maxBytes: 10_000 });
    const conversation = Array.from({ length: 200 }, (_, i) => ({
      content: `message ${i} ${"x".repeat(100)}`,
    }));
    invocationIdentity({ role: "r", conversation });
    const on = normalizationReuseStats();
    expect(on.bytes).toBeLessThanOrEqual(10_000);
    expect(on.entries).toBeGreaterThan(0);
    expect(configureNormalizationReuse({ maxBytes: 0 })).toBe(10_000);
    invocationIdentity({ role: "r", conversation });
    expect(normalizationReuseStats()).toMatchObject({ bytes: 0, entries: 0 });
  });

  it("keeps reusing a conversation's prefix when the conversation outgrows the bound", () => {
    // An agent re-sends every earlier message in order. A plain LRU smaller
    // than the conversation evicts each message just before it is asked for
    // again: nothing is ever reused. The request's own strings are not evicted
    // to make room for more of the same request.
    configureNormalizationReuse({ maxBytes: 20_000 });
    clearNormalizationReuse();
    const conversation = Array.from({ length: 200 }, (_, i) => ({
      content: `message ${i} ${"x".repeat(100)}`,
    }));
    const first = invocationIdentity({ role: "r", conversation });
    const before = normalizationReuseStats();
    expect(invocationIdentity({ role: "r", conversation })).toBe(first);
    const after = normalizationReuseStats();
    // Every string the first request kept (a few dozen fit) is found by the second.
    expect(before.entries).toBeGreaterThan(10);
    expect(after.hits - before.hits).toBe(before.entries);
    expect(after.bytes).toBeLessThanOrEqual(20_000);
    // A new conversation still gets room: what no request is using goes first.
    const other = conversation.map((m) => ({ content: `${m.content} other` }));
    invocationIdentity({ role: "r", conversation: other });
    const third = normalizationReuseStats();
    expect(invocationIdentity({ role: "r", conversation: other })).toBeTypeOf("string");
    expect(normalizationReuseStats().hits - third.hits).toBeGreaterThan(10);
  });

  it("evicts the least recently used string, a string found again counting as used", () => {
    clearNormalizationReuse();
    const text = (c: string) => c.repeat(200);
    const once = (c: string) => invocationIdentity({ role: "r", conversation: [text(c)] });
    once("a");
    const size = normalizationReuseStats().bytes; // one kept string (all the same size)
    configureNormalizationReuse({ maxBytes: 4 * size });
    clearNormalizationReuse();
    for (const c of ["a", "b", "c", "d"]) once(c);
    expect(normalizationReuseStats().entries).toBe(4);
    once("a"); // found: now the most recently used
    once("e"); // room for it: "b" goes, not "a"
    const before = normalizationReuseStats();
    once("a");
    expect(normalizationReuseStats().hits - before.hits).toBe(1);
    once("b");
    expect(normalizationReuseStats().misses - before.misses).toBe(1);
  });

  it("evicts from the option set least recently used, a set used again counting as used", () => {
    // Two projects: two option sets. The cache leaves its list of sets alone
    // when a request's set is already the most recent; it must still move a
    // set used again to the end, or the wrong set's strings would go first.
    clearNormalizationReuse();
    const text = (c: string) => c.repeat(200);
    const once = (project: string, c: string) =>
      invocationIdentity({ role: "r", conversation: [text(c)], projectPath: project });
    once("/p", "a");
    const size = normalizationReuseStats().bytes;
    configureNormalizationReuse({ maxBytes: 4 * size });
    clearNormalizationReuse();
    once("/p", "a");
    once("/q", "b");
    once("/q", "c");
    once("/p", "a"); // found: its set is now the most recently used
    once("/p", "d");
    expect(normalizationReuseStats().entries).toBe(4);
    once("/p", "e"); // room for it: the other set's oldest, "b", goes
    const before = normalizationReuseStats();
    once("/p", "a");
    expect(normalizationReuseStats().hits - before.hits).toBe(1);
    once("/q", "b");
    expect(normalizationReuseStats().misses - before.misses).toBe(1);
  });

  it("refuses a bound that is not a byte count, naming it", () => {
    expect(() => configureNormalizationReuse({ maxBytes: -1 })).toThrow(InvalidOptionError);
    expect(() => configureNormalizationReuse({ maxBytes: 1.5 })).toThrow(
      /maxBytes must be an integer >= 0/,
    );
    expect(() => configureNormalizationReuse(null as never)).toThrow(InvalidOptionError);
  });
});
