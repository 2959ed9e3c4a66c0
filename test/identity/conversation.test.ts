import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { conversationPrompt, requestRulesFired } from "../../src/identity/index.js";
import { invocationIdentity, invocationManifest, normalizePrompt } from "../../src/index.js";

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

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

  it("property: the whole-text pass never changes a conversation prompt", () => {
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
