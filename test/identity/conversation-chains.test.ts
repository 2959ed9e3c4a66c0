/**
 * A conversation's kept segments (src/identity/conversation-chains.ts):
 * the earlier messages of an agent loop written and hashed once, each turn
 * continuing from the hash state after them. They must never change an
 * identity or a prompt: the same calls give the same identities and
 * prompts with them and without them (reuse off), and as the general path
 * gives for a plain copy of each manifest, whatever changes between calls:
 * messages appended, a turn branching from an earlier prefix, the same
 * turn again, the model, params, attempt, roots, the environment's
 * secrets, members of the conversation around the array, elements that
 * are not frozen or that read through a getter.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { segmentCounts } from "../../src/identity/conversation-chains.js";
import { checkpointCounts } from "../../src/identity/hash-checkpoints.js";
import {
  clearNormalizationReuse,
  configureNormalizationReuse,
  DEFAULT_REUSE_BYTES,
  manifestIdentity,
  normalizationReuseStats,
} from "../../src/identity/index.js";
import { createSha256, createSha256Noble, preloadNobleSha256 } from "../../src/identity/sha256.js";
import {
  type IdentityOptions,
  type InvocationRequest,
  invocationIdentity,
  invocationManifest,
} from "../../src/index.js";
import { refreshSecretEnv } from "../../src/normalize/index.js";

const SECRET_ENV = "CHAINS_TEST_API_KEY";
const SECRET = "sk-live-Zq9Xv8Wu7Ts6Rr5";

afterEach(() => {
  configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
  clearNormalizationReuse();
  delete process.env[SECRET_ENV];
  refreshSecretEnv();
});

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

const piece = fc.constantFrom(
  "/work/run-7/src/a.ts",
  "/home/u/.cache",
  "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "2026-09-09T10:00:00Z",
  "  \n\t ",
  "hello",
  "é",
  '"quoted\\"',
  "\u0001",
  "\ud800",
  "\udc00x",
  "😀",
  SECRET,
);
const text = fc.array(piece, { maxLength: 10 }).map((p) => p.join(" "));
/** Mostly short; now and then past the identity's 8 K slice and the reuse cache's long-key length. */
const content = fc.oneof(
  { weight: 6, arbitrary: text },
  { weight: 1, arbitrary: text.map((t) => `${t}${"x/work/run-7 é".repeat(1300)}`) },
);
/**
 * How a message is made: frozen (as createFetch's body reuse hands them),
 * plain (followed by value: a private copy is kept), or frozen with a getter.
 */
const made = fc.oneof(
  { weight: 15, arbitrary: fc.constant("frozen") },
  { weight: 15, arbitrary: fc.constant("plain") },
  { weight: 2, arbitrary: fc.constant("getter") },
);
const message = fc.record({ content, made, parts: fc.boolean() });

/** What a step does to the conversation, and what it changes beside it. */
const step = fc.record({
  /** Messages appended (0: the same turn again). */
  add: fc.array(message, { maxLength: 3 }),
  /** Branch: go back to this many messages first (beyond the length: no branch). */
  back: fc.option(fc.nat(12), { freq: 4 }),
  shape: fc.constantFrom("messages", "messages+system", "input+instructions", "a+contents"),
  model: fc.constantFrom("gpt-a", "gpt-b", null),
  params: fc.constantFrom(undefined, { temperature: 0 }, { prompt: "", tools: ["t"] }),
  attempt: fc.constantFrom(0, 0, 1),
  projectPath: fc.constantFrom("/work/run-7", undefined),
  secret: fc.boolean(),
  /** Mutate the last plain message in place before the call. */
  mutate: fc.boolean(),
  /** Send the plain messages as new objects of the same value (as a body parsed anew each turn). */
  fresh: fc.boolean(),
});
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

let getterFlip = 0;
/** Messages with a getter. */
const readsThrough = new WeakSet<object>();
function makeMessage(
  m: { content: string; made: string; parts: boolean },
  i: number,
): Record<string, unknown> {
  const role = i % 2 === 0 ? "user" : "assistant";
  const body: Record<string, unknown> = m.parts
    ? { role, content: [{ type: "text", text: m.content }] }
    : { role, content: m.content };
  if (m.made === "plain") return body;
  if (m.made === "getter") {
    // Frozen, yet it reads differently each time: never kept.
    Object.defineProperty(body, "name", {
      get: () => `n${getterFlip++ % 3}`,
      enumerable: true,
    });
    readsThrough.add(body);
    return Object.freeze(body);
  }
  return deepFreeze(body);
}

/** Run the steps; the identities (invocationIdentity and the recorder's path) and prompts they give. */
function run(steps: Step[]): string[] {
  getterFlip = 0;
  let messages: Record<string, unknown>[] = [deepFreeze({ role: "system", content: "sys" })];
  const out: string[] = [];
  for (const s of steps) {
    if (s.back !== null && s.back < messages.length) messages = messages.slice(0, s.back);
    for (const m of s.add) messages.push(makeMessage(m, messages.length));
    if (s.mutate) {
      const plain = messages.findLast((m) => !Object.isFrozen(m));
      if (plain !== undefined) plain.content = `${String(plain.content)} changed`;
    }
    if (s.secret) process.env[SECRET_ENV] = SECRET;
    else delete process.env[SECRET_ENV];
    refreshSecretEnv();
    // A new array each call, as createFetch's body reuse hands out (same
    // elements), or with the plain messages copied.
    const list = s.fresh
      ? messages.map((m) => (Object.isFrozen(m) ? m : (JSON.parse(JSON.stringify(m)) as typeof m)))
      : messages.slice();
    const conversation: Record<string, unknown> =
      s.shape === "messages"
        ? { messages: list }
        : s.shape === "messages+system"
          ? { system: "be /work/run-7 brief", messages: list }
          : s.shape === "input+instructions"
            ? { instructions: "x", input: list }
            : { a: ["first array"], contents: list };
    const req: InvocationRequest = {
      role: "builder",
      conversation,
      model: s.model,
      projectPath: s.projectPath,
      ...(s.params === undefined ? {} : { params: s.params }),
    };
    const opts: IdentityOptions = { homeDir: "/home/u", tmpDirs: ["/tmp"], attempt: s.attempt };
    const id = invocationIdentity(req, opts);
    const manifest = invocationManifest(req, opts);
    const recorderId = manifestIdentity(manifest);
    // The general path: a plain copy of the manifest carries no pieces.
    expect(manifestIdentity({ ...manifest, prompt: `${manifest.prompt}` })).toBe(recorderId);
    // A getter answers each read differently: the two paths read it twice.
    if (!messages.some((m) => readsThrough.has(m))) {
      expect(recorderId).toBe(id);
      // A segment seen once is kept as pieces, its hash state worked out by
      // the next call that finds it (the manifest's identity above): this
      // one continues from that state.
      expect(invocationIdentity(req, opts)).toBe(id);
    }
    out.push(id, recorderId, manifest.prompt);
  }
  return out;
}

describe("conversation segments", () => {
  it("give the identities and prompts that no reuse gives, over random loops", () => {
    const before = { ...segmentCounts };
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 10 }), (steps) => {
        configureNormalizationReuse({ maxBytes: 0 });
        const without = run(steps);
        configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
        clearNormalizationReuse();
        expect(run(steps)).toEqual(without);
        expect(run(steps)).toEqual(without); // everything already kept
      }),
      { numRuns: 200 },
    );
    // The segments were used (else this test could not fail).
    expect(segmentCounts.found - before.found).toBeGreaterThan(200);
    expect(segmentCounts.continued - before.continued).toBeGreaterThan(200);
  });

  it("hashes only what follows the kept messages on the next turn", () => {
    clearNormalizationReuse();
    const messages: object[] = [];
    const opts = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
    const before = { ...segmentCounts };
    for (let t = 0; t < 6; t++) {
      messages.push(deepFreeze({ role: "user", content: `turn ${t} ${"y".repeat(3000)}` }));
      const req = { role: "r", conversation: { messages: messages.slice() } };
      const id = invocationIdentity(req, opts);
      configureNormalizationReuse({ maxBytes: 0 });
      expect(invocationIdentity(req, opts)).toBe(id);
      configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
    }
    // Turning reuse off empties the segments: each turn starts one, none continues.
    expect(segmentCounts.found - before.found).toBe(0);
    for (let t = 6; t < 10; t++) {
      messages.push(deepFreeze({ role: "user", content: `turn ${t} ${"y".repeat(3000)}` }));
      invocationIdentity({ role: "r", conversation: { messages: messages.slice() } }, opts);
    }
    // Turns 7..9 continue from the turn before's segment; turn 6's was kept
    // as pieces (a conversation seen once costs no join), so turn 7 hashes
    // from the start and keeps its state, which 8 and 9 continue.
    expect(segmentCounts.found - before.found).toBe(3);
    expect(segmentCounts.continued - before.continued).toBe(2);
  });

  it("follows a conversation whose messages are new objects each turn (a body parsed anew), by value", () => {
    clearNormalizationReuse();
    const opts = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
    const sent: { role: string; content: string }[] = [];
    const before = { ...segmentCounts };
    const ids: string[] = [];
    for (let t = 0; t < 6; t++) {
      sent.push({
        role: t % 2 === 0 ? "user" : "assistant",
        content: `turn ${t} ${"y".repeat(3000)}`,
      });
      // Every message a new object, as JSON.parse of each turn's body gives.
      const messages = JSON.parse(JSON.stringify(sent)) as unknown[];
      ids.push(invocationIdentity({ role: "r", conversation: { messages } }, opts));
    }
    // Turns 2..6 find the turn before's segment; from turn 3 on the hash
    // continues from its state (turn 1's segment was kept as pieces).
    expect(segmentCounts.found - before.found).toBe(5);
    expect(segmentCounts.continued - before.continued).toBe(4);
    configureNormalizationReuse({ maxBytes: 0 });
    for (let t = 0; t < 6; t++) {
      const messages = JSON.parse(JSON.stringify(sent.slice(0, t + 1))) as unknown[];
      expect(invocationIdentity({ role: "r", conversation: { messages } }, opts)).toBe(ids[t]);
    }
  });

  it("keeps what segments hold within the reuse cache's bound, and finds a copied segment past its cap", () => {
    const opts = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
    const turn = (t: number) => ({ role: "user", content: `turn ${t} ${"é/work/q".repeat(600)}` });
    const loop = (turns: number) => {
      const sent: object[] = [];
      const ids: string[] = [];
      for (let t = 0; t < turns; t++) {
        sent.push(turn(t));
        const messages = JSON.parse(JSON.stringify(sent)) as unknown[];
        ids.push(invocationIdentity({ role: "r", conversation: { messages } }, opts));
        const stats = normalizationReuseStats();
        expect(stats.bytes).toBeLessThanOrEqual(stats.maxBytes);
      }
      return ids;
    };
    configureNormalizationReuse({ maxBytes: 0 });
    const without = loop(150);
    // A bound the segments alone outgrow: the cache's strings, then the segments, make room.
    configureNormalizationReuse({ maxBytes: 256 * 1024 });
    const before = { ...segmentCounts };
    expect(loop(150)).toEqual(without);
    expect(segmentCounts.found - before.found).toBeGreaterThan(10);
    // The default bound: the copied segment stops growing at its cap (each
    // turn adds ~20 KB), and is still found as the conversation's start
    // (the cap's effect on memory is the agent-loop bench's memory rows).
    configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
    clearNormalizationReuse();
    const found = segmentCounts.found;
    expect(loop(150)).toEqual(without);
    expect(segmentCounts.found - found).toBe(149);
  });

  it("answers inputs the writer refuses or treats apart as reuse off does (copies made first)", () => {
    const cyclic: Record<string, unknown> = { role: "user", content: "x" };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { end: true };
    for (let i = 0; i < 200; i++) deep = { n: deep };
    const conversations: unknown[][] = [
      [cyclic],
      [
        {
          role: "user",
          get content(): string {
            throw new Error("boom");
          },
        },
      ],
      [{ role: "user", at: new Date(0) }],
      [{ role: "user", n: Number.NaN }],
      // biome-ignore lint/suspicious/noSparseArray: a hole is the input under test
      [, { role: "user" }],
      [{ role: "user", x: undefined, content: "a" }],
      [deep],
      // A "__proto__" member is an ordinary member, in the copy too.
      JSON.parse('[{"__proto__": {"a": 1}, "role": "user"}]') as unknown[],
      JSON.parse('[{"__proto__": {"a": 2}, "role": "user"}]') as unknown[],
    ];
    const answer = (messages: unknown[]) => {
      try {
        return invocationIdentity({ role: "r", conversation: { messages } });
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    };
    configureNormalizationReuse({ maxBytes: 0 });
    const without = conversations.map(answer);
    configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
    clearNormalizationReuse();
    expect(conversations.map(answer)).toEqual(without);
    expect(conversations.map(answer)).toEqual(without); // each one kept now, where it can be
    expect(new Set(without.slice(-2)).size).toBe(2);
  });

  it("follows an element that is frozen but reads through a getter", () => {
    let n = 0;
    const tricky = Object.freeze(
      Object.defineProperty({ role: "user" }, "content", {
        get: () => `read ${n++} ${"z".repeat(5000)}`,
        enumerable: true,
      }),
    );
    const first = deepFreeze({ role: "system", content: "s".repeat(5000) });
    const ids = new Set<string>();
    for (let t = 0; t < 3; t++) {
      const req = { role: "r", conversation: { messages: [first, tricky] } };
      const id = invocationIdentity(req, {});
      ids.add(id);
      // The prompt shows the getter's answer of this call.
      expect(invocationManifest(req, {}).prompt).toContain(`read ${2 * t + 1} `);
    }
    expect(ids.size).toBe(3);
  });

  it("follows a plain element changed in place between turns", () => {
    const first = deepFreeze({ role: "system", content: "s".repeat(5000) });
    const plain = { role: "user", content: "a".repeat(5000) };
    const id1 = invocationIdentity({ role: "r", conversation: { messages: [first, plain] } });
    plain.content = "b".repeat(5000);
    const id2 = invocationIdentity({ role: "r", conversation: { messages: [first, plain] } });
    expect(id2).not.toBe(id1);
    configureNormalizationReuse({ maxBytes: 0 });
    expect(invocationIdentity({ role: "r", conversation: { messages: [first, plain] } })).toBe(id2);
  });
});

describe("conversation segments under another manifest head", () => {
  it("hash the same messages anew under another model, params or attempt", () => {
    const messages = [
      deepFreeze({ role: "system", content: "s".repeat(5000) }),
      deepFreeze({ role: "user", content: "u".repeat(5000) }),
    ];
    const heads: [InvocationRequest, IdentityOptions][] = [
      [{ role: "r", model: "a", conversation: { messages } }, {}],
      [{ role: "r", model: "b", conversation: { messages } }, {}],
      [{ role: "r", model: "b", conversation: { messages }, params: { temperature: 1 } }, {}],
      [{ role: "r", model: "b", conversation: { messages } }, { attempt: 1 }],
      [{ role: "r", model: "a", conversation: { input: messages } }, {}],
    ];
    const withSegments: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [req, opts] of heads) {
        withSegments.push(invocationIdentity(req, opts));
        withSegments.push(manifestIdentity(invocationManifest(req, opts)));
      }
    }
    configureNormalizationReuse({ maxBytes: 0 });
    const without: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [req, opts] of heads) {
        without.push(invocationIdentity(req, opts));
        without.push(manifestIdentity(invocationManifest(req, opts)));
      }
    }
    expect(withSegments).toEqual(without);
    expect(new Set(without).size).toBe(heads.length);
  });

  it("continue no state kept under another head when the next turn adds messages", () => {
    const messages = [deepFreeze({ role: "system", content: "s".repeat(5000) })];
    const ids = (reuse: number) => {
      configureNormalizationReuse({ maxBytes: reuse });
      clearNormalizationReuse();
      const out: string[] = [];
      for (let t = 1; t < 6; t++) {
        const list = messages.slice(0, t);
        const req = { role: "r", model: `m${t % 2}`, conversation: { messages: list } };
        out.push(invocationIdentity(req, { attempt: t % 3 === 0 ? 1 : 0 }));
      }
      return out;
    };
    for (let t = 1; t < 6; t++) messages.push(deepFreeze({ role: "user", content: `u${t}` }));
    expect(ids(DEFAULT_REUSE_BYTES)).toEqual(ids(0));
  });
});

describe("hash checkpoints (conversations parsed anew each turn)", () => {
  it("give the identities no reuse gives, over random loops of unfrozen messages", () => {
    const before = checkpointCounts.continued;
    const long = fc.oneof(
      { weight: 2, arbitrary: text },
      { weight: 1, arbitrary: text.map((t) => `${t}${"w/work/run-7 é\ud800 ".repeat(2500)}`) },
    );
    const turn = fc.record({
      add: fc.array(long, { maxLength: 3 }),
      back: fc.option(fc.nat(8), { freq: 4 }),
      model: fc.constantFrom("gpt-a", "gpt-b"),
      attempt: fc.constantFrom(0, 0, 1),
      system: fc.boolean(),
    });
    const runTurns = (turns: (typeof turn extends fc.Arbitrary<infer T> ? T : never)[]) => {
      let contents: string[] = ["sys"];
      const out: string[] = [];
      for (const s of turns) {
        if (s.back !== null && s.back < contents.length) contents = contents.slice(0, s.back);
        contents.push(...s.add);
        // Parsed anew each turn: new objects, new strings.
        const messages = JSON.parse(
          JSON.stringify(
            contents.map((c, i) => ({ role: i % 2 ? "user" : "assistant", content: c })),
          ),
        ) as unknown[];
        const conversation = s.system ? { messages, system: "brief" } : { messages };
        const req = { role: "r", model: s.model, conversation };
        const opts = { attempt: s.attempt };
        const id = invocationIdentity(req, opts);
        const manifest = invocationManifest(req, opts);
        expect(manifestIdentity(manifest)).toBe(id);
        out.push(id);
      }
      return out;
    };
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 8 }), (turns) => {
        configureNormalizationReuse({ maxBytes: 0 });
        const without = runTurns(turns);
        configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
        clearNormalizationReuse();
        expect(runTurns(turns)).toEqual(without);
        expect(runTurns(turns)).toEqual(without);
      }),
      { numRuns: 100 },
    );
    expect(checkpointCounts.continued - before).toBeGreaterThan(100);
  });

  it("continue from no checkpoint of a conversation whose text differs at the same length", () => {
    const ids = () => {
      const out: string[] = [];
      for (const c of ["a", "b", "a", "b"]) {
        const messages = [
          { role: "user", content: c.repeat(70_000) },
          { role: "user", content: "next" },
        ];
        out.push(invocationIdentity({ role: "r", conversation: { messages } }));
      }
      return out;
    };
    const withReuse = ids();
    configureNormalizationReuse({ maxBytes: 0 });
    expect(withReuse).toEqual(ids());
    expect(new Set(withReuse).size).toBe(2);
  });
});

describe("Sha256.copy", () => {
  it("continues an independent copy of the state, on node:crypto and on the pure-JS fallback", async () => {
    await preloadNobleSha256();
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (a, b, c) => {
        const whole = (x: string) => createHash("sha256").update(x, "utf8").digest("hex");
        const [p, q, r] = [a, b, c].map((x) => (x.isWellFormed() ? x : "?"));
        for (const make of [createSha256, createSha256Noble]) {
          const h = make().update(p!);
          const copy = h.copy();
          h.update(q!);
          copy.update(r!);
          expect(h.hex()).toBe(whole(p! + q!));
          expect(copy.hex()).toBe(whole(p! + r!));
        }
      }),
      { numRuns: 200 },
    );
  });
});
