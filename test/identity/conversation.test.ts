import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/identity/canonical-json.js";
import { conversationPrompt, requestRulesFired } from "../../src/identity/index.js";
import { invocationIdentity, invocationManifest, normalizePrompt } from "../../src/index.js";

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

/**
 * The recipe as first written, two passes: a copy of the tree with every
 * string normalized (members in their own order, undefined ones dropped),
 * then canonical JSON of the copy. conversationPrompt does it in one.
 */
function twoPassPrompt(value: unknown, normalize: (s: string) => string): string {
  const copy = (v: unknown, path: string): unknown => {
    if (typeof v === "string") return normalize(v);
    if (typeof v === "number" && !Number.isFinite(v))
      throw new TypeError(`${path} is ${v}, which JSON cannot represent`);
    if (typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) return v.map((x, i) => copy(x, `${path}[${i}]`));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      Object.defineProperty(out, k, {
        value: copy(x, `${path}.${k}`),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  return canonicalJson(copy(value, "request.conversation") as never);
}

/** JSON-like trees with what can trip a one-pass writer: odd keys, lone surrogates, -0, undefined members, long strings. */
const trickyJson = (() => {
  const strings = fc.oneof(
    fc.string(),
    fc.string({ unit: "binary" }),
    fc.constantFrom(
      "/w/a.ts",
      "/home/u/x",
      "/tmp/y",
      "2026-09-09T10:00:00Z",
      "a\n\n b",
      " é ",
      "\ud800x",
      'q"\\\u0001',
      "user",
      `${"x".repeat(9000)}\udc00${"/w/b ".repeat(500)}`,
    ),
  );
  const keys = fc.oneof(
    fc.constantFrom("role", "content", "__proto__", "10", "2", "a", "B", "é", "\ud800", ""),
    fc.string(),
  );
  return fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      strings,
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(null, true, false, -0, 1e21, 5e-7),
      fc.array(tie("value"), { maxLength: 5 }),
      fc.dictionary(keys, fc.oneof(tie("value"), fc.constant(undefined)), { maxKeys: 5 }),
    ),
  })).value;
})();

describe("request.conversation", () => {
  it("becomes the prompt: canonical JSON, each string normalized, keys kept", () => {
    const m = invocationManifest(
      {
        role: "planner",
        conversation: { messages: [{ role: "user", content: "Fix /w/a.ts\n\n now" }] },
        projectPath: "/w",
      },
      machine,
    );
    expect(m.prompt).toBe('{"messages":[{"content":"Fix {project}/a.ts now","role":"user"}]}');
  });

  it("is the recipe v1 prompt: the identity of the text the adapters used to pass", () => {
    // Before: adapters passed prompt = conversationPrompt(...), which the
    // manifest normalized again as a whole. That second pass changed nothing.
    const conversation = {
      system: "You are  careful.\tAlways.",
      messages: [
        { role: "user", content: "Read /home/u/.npmrc and /w/src/x.ts at 2026-09-09T10:00:00Z" },
        {
          role: "assistant",
          content: [{ type: "text", text: "id 3f2504e0-4f89-11d3-9a0c-0305e82c3301" }],
        },
      ],
      n: [1, 2.5, null, true],
    };
    const opts = { ...machine, projectPath: "/w" };
    const text = conversationPrompt(conversation, opts);
    expect(normalizePrompt(text, opts)).toBe(text);
    expect(invocationIdentity({ role: "r", conversation, projectPath: "/w" }, machine)).toBe(
      invocationIdentity({ role: "r", prompt: text, projectPath: "/w" }, machine),
    );
  });

  it("a whole-text pass would change a conversation with fenced code: why the recipe goes string by string", () => {
    const opts = { ...machine, projectPath: "/w" };
    const conversation = {
      messages: [{ role: "user", content: "see\n```\nif (a)  {\n    b()\n}\n```" }],
    };
    const text = conversationPrompt(conversation, opts);
    // The fenced code keeps its indentation string by string...
    expect(text).toContain("if (a)  {\\n    b()");
    // ...which a pass over the JSON text (no line starts there) would collapse.
    expect(normalizePrompt(text, opts)).not.toBe(text);
  });

  it("property: without code fences, the whole-text pass never changes a conversation prompt", () => {
    const opts = { ...machine, projectPath: "/w" };
    const strings = fc.oneof(
      fc.string(),
      fc.constantFrom("/w/a.ts", "/home/u/x", "/tmp/y", "2026-09-09T10:00:00Z", "a\n\n b", " é "),
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        strings,
        fc.integer(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(fc.constantFrom("role", "content", "text", "type"), tie("value"), {
          maxKeys: 3,
        }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (conversation) => {
        const text = conversationPrompt(conversation, opts);
        expect(normalizePrompt(text, opts)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it("property: one pass gives the two-pass text exactly, with and without counting rules", () => {
    const opts = { ...machine, projectPath: "/w" };
    fc.assert(
      fc.property(trickyJson, (conversation) => {
        const expected = twoPassPrompt(conversation, (s) => normalizePrompt(s, opts));
        expect(conversationPrompt(conversation, opts)).toBe(expected);
        expect(conversationPrompt(conversation, opts, {})).toBe(expected);
      }),
      { numRuns: 400 },
    );
  });

  it("errors name the same field as before: the first bad member in its own order, holes last", () => {
    const bad = { b: Number.NaN, a: Number.POSITIVE_INFINITY };
    expect(() => conversationPrompt(bad, machine)).toThrow(/request.conversation.b is NaN/);
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const holey = [1, , 2];
    expect(() => conversationPrompt({ x: holey }, machine)).toThrow(/array index 1 is a hole/);
    expect(() => conversationPrompt({ x: holey, y: [Number.NaN] }, machine)).toThrow(
      /request.conversation.y\[0\] is NaN/,
    );
  });

  it("a cycle and very deep nesting (past the writer's depth) take the two passes", () => {
    const cyclic: Record<string, unknown> = { a: "x" };
    cyclic.self = { inner: cyclic };
    expect(() => conversationPrompt(cyclic, machine)).toThrow(
      /request.conversation.self.inner contains a cycle/,
    );
    let deep: unknown = "at 2026-09-09T10:00:00Z";
    for (let i = 0; i < 300; i++) deep = i % 2 === 0 ? [deep] : { k: deep };
    const opts = { ...machine, projectPath: "/w" };
    const expected = twoPassPrompt(deep, (s) => normalizePrompt(s, opts));
    expect(expected).toContain("{timestamp}");
    expect(conversationPrompt(deep, opts)).toBe(expected);
    // Rules fired are counted once, also when the writer hands over to the walk.
    const shallow = { a: "at 2026-09-09T10:00:00Z", b: deep };
    expect(
      requestRulesFired({ role: "r", conversation: shallow, projectPath: "/w" }, machine),
    ).toEqual({
      timestamp: 2,
    });
  });

  it("rules fired are counted string by string", () => {
    expect(
      requestRulesFired(
        {
          role: "r",
          conversation: [{ content: "at 2026-09-09T10:00:00Z in /w/a" }, "2026-09-10T00:00:00Z"],
          projectPath: "/w",
        },
        machine,
      ),
    ).toEqual({ timestamp: 2, "root:project": 1 });
  });

  it("bad requests are TypeErrors naming the field", () => {
    expect(() => invocationManifest({ role: "r" })).toThrow(/request.prompt must be a string/);
    expect(() => invocationManifest({ role: "r", prompt: "p", conversation: [] })).toThrow(
      /both prompt and conversation/,
    );
    expect(() =>
      invocationManifest({ role: "r", conversation: { messages: [{ at: new Date(0) }] } }),
    ).toThrow(/request.conversation.messages\[0\].at is a Date/);
    expect(() => invocationManifest({ role: "r", conversation: { n: Number.NaN } })).toThrow(
      /request.conversation.n is NaN/,
    );
  });
});
