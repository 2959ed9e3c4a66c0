/**
 * Small manifests are written as one string and hashed in one call
 * (`smallManifestIdentity`, src/identity/model-identity.ts, through
 * `smallCanonicalJson`): over random JSON (lone surrogates, control
 * characters, quotes, -0, exponents, keys out of order, nesting) the text is
 * canonicalJson's and the identity is SHA-256 of the domain tag and the
 * manifest's WTF-8 bytes computed the plain way; values that are not plain
 * JSON are left to the general path, which reports them as before.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, smallCanonicalJson } from "../../src/identity/canonical-json.js";
import { manifestIdentity } from "../../src/identity/identity.js";
import { invocationIdentity, invocationManifest } from "../../src/identity/index.js";
import { plainIdentity } from "../helpers/plain-identity.js";

/** Strings that stress escaping: quotes, backslashes, controls, lone surrogates, non-ASCII. */
const text = fc
  .array(
    fc.oneof(
      fc.constantFrom('"', "\\", "\n", "\u0000", "\u001f", "\u007f", "\ud800", "\udfff", "é", "🎉"),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: "binary", maxLength: 4 }),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(""));

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.constantFrom(0, -0, 1e21, 1e-7, -1.5, 2 ** 53, 123456789.125),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(text, tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("small manifests: one string, the same bytes", () => {
  it("smallCanonicalJson is canonicalJson whenever it answers", () => {
    fc.assert(
      fc.property(json, (v) => {
        const small = smallCanonicalJson(v as never, 4096);
        if (small !== undefined) expect(small).toBe(canonicalJson(v as never));
      }),
      { numRuns: 2000 },
    );
  });

  it("answers for small plain JSON, not for large or non-JSON values", () => {
    expect(smallCanonicalJson({ b: [1, -0, "é\n"], a: null }, 4096)).toBe(
      '{"a":null,"b":[1,0,"é\\n"]}',
    );
    expect(smallCanonicalJson("x".repeat(5000), 4096)).toBeUndefined();
    expect(smallCanonicalJson(Array(300).fill("xxxxxxxxxxxxxxxx"), 4096)).toBeUndefined();
    const holey = [1, 2, 3];
    delete holey[1];
    expect(smallCanonicalJson(holey, 4096)).toBeUndefined();
    expect(smallCanonicalJson({ a: Number.NaN } as never, 4096)).toBeUndefined();
    expect(smallCanonicalJson({ a: undefined } as never, 4096)).toBeUndefined();
  });

  it("gives the plain hash for random small manifests, prompts and conversations", () => {
    fc.assert(
      fc.property(
        text,
        text,
        fc.option(fc.dictionary(text, json, { maxKeys: 5 }), { nil: undefined }),
        fc.boolean(),
        fc.nat(3),
        (prompt, role, params, asConversation, attempt) => {
          const req = asConversation
            ? { role: `r${role}`, conversation: { messages: [{ role, content: prompt }] }, params }
            : { role: `r${role}`, prompt, params };
          const m = invocationManifest(req as never, { attempt });
          expect(manifestIdentity(m)).toBe(plainIdentity(m));
          expect(invocationIdentity(req as never, { attempt })).toBe(plainIdentity(m));
          // A plain copy (no side information from the conversation) gives the same.
          expect(manifestIdentity(structuredClone(m))).toBe(plainIdentity(m));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("gives the plain hash for conversations of any length beside params of any size", () => {
    // invocationIdentity never builds a conversation's prompt: it hashes the
    // escaped pieces, written as one string when short, else between the
    // other members, whether the size comes from the prompt or the params.
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 6 }),
        fc.nat(3),
        fc.nat(3),
        fc.dictionary(text, json, { maxKeys: 3 }),
        fc.option(text, { nil: undefined }),
        (contents, promptRepeat, paramsRepeat, params, model) => {
          const big = (t: string, n: number) => (n === 0 ? t : `${t}${'x\n"y'.repeat(700 * n)}`);
          const messages = contents.map((c, i) => ({
            role: i % 2 === 0 ? "user" : "assistant",
            content: big(c, i === 0 ? promptRepeat : 0),
          }));
          // The model is written before the prompt, the params after it: a
          // lone surrogate on either side of a long prompt's pieces counts.
          const req = {
            role: "r",
            model,
            conversation: { messages },
            params: { ...params, tools: big("t", paramsRepeat) },
          };
          const m = invocationManifest(req as never);
          expect(invocationIdentity(req as never)).toBe(plainIdentity(m));
          expect(manifestIdentity(m)).toBe(plainIdentity(m));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("hashes a lone surrogate before or after a long conversation's prompt as WTF-8", () => {
    // The prompt's pieces are known well-formed (no text of theirs is read
    // again before hashing): the members around them still decide.
    const messages = [{ role: "user", content: "line\n".repeat(3000) }];
    // Members sort as attempt, inputs, model, params, prompt, role, task.
    for (const [model, params, role, task] of [
      ["m\ud800", { t: 0 }, "r", "t"],
      ["m", { t: "\udc00" }, "r", "t"],
      ["m", { t: 0 }, "r\udfff", "t"],
      ["m", { t: 0 }, "r", "t\ud83d"],
    ] as const) {
      const req = { role, model, task, conversation: { messages }, params };
      const m = invocationManifest(req as never);
      expect(invocationIdentity(req as never)).toBe(plainIdentity(m));
      expect(manifestIdentity(m)).toBe(plainIdentity(m));
    }
  });

  it("hashes redacted params, not the text checked before redaction", () => {
    const req = {
      role: "r",
      prompt: "p",
      params: { auth: "Bearer abc123def456ghi789jkl012", temperature: 0 },
    };
    const m = invocationManifest(req);
    expect(JSON.stringify(m.params)).toContain("{secret:");
    expect(invocationIdentity(req)).toBe(plainIdentity(m));
    // The same params again (now a known text for the clean set? never: it held a secret).
    expect(invocationIdentity(req)).toBe(plainIdentity(m));
  });

  it("still reports what is not JSON, as the general path does", () => {
    const m = invocationManifest({ role: "r", prompt: "p" });
    expect(() => manifestIdentity({ ...m, params: { t: Number.NaN } } as never)).toThrow(
      /JCS: NaN is not a JSON number/,
    );
  });
});
