/**
 * createFetch's body parse across an agent loop (src/adapters/body-reuse.ts):
 * a body that extends an earlier one has only its new part parsed, and the
 * result is always `JSON.parse`'s, value, key order, -0 and errors
 * included, whatever the texts (pretty-printed, duplicate keys, numbers as
 * JSON.stringify never writes them, a trailing comma, several loops at once).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BodyChains } from "../../src/adapters/body-reuse.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** What JSON.parse gives, or the error it throws (its class). */
function outcome(parse: (t: string) => unknown, text: string): unknown {
  try {
    return { value: parse(text) };
  } catch (error) {
    return { threw: (error as Error).constructor.name };
  }
}

/** Equal as JSON.parse results: values (Object.is on numbers, so -0 counts), key order too. */
function expectSame(got: unknown, want: unknown): void {
  expect(got).toStrictEqual(want);
  expect(order(got)).toEqual(order(want));
}

function order(v: unknown): unknown {
  if (v === null || typeof v !== "object") return Object.is(v, -0) ? "-0" : v;
  if (Array.isArray(v)) return v.map(order);
  return Object.keys(v).map((k) => [k, order((v as Record<string, unknown>)[k])]);
}

const message = (i: number, content = `message ${i}: héllo "quoted" \\ 👋 \n`) => ({
  role: i % 2 === 0 ? "user" : "assistant",
  content,
});

describe("BodyChains", () => {
  it("parses a growing conversation as JSON.parse does, reusing the earlier messages", () => {
    const chains = new BodyChains();
    const messages: Json[] = [{ role: "system", content: "terse" }];
    let previous: { messages: Json[] } | undefined;
    for (let t = 0; t < 6; t++) {
      messages.push(message(2 * t), message(2 * t + 1));
      const text = JSON.stringify({ model: "m", messages, temperature: 0 });
      const got = chains.parse(text) as { messages: Json[] };
      expectSame(got, JSON.parse(text));
      if (previous !== undefined && t >= 2) {
        // The same objects as the body before (checked once the chain was proven), frozen.
        expect(got.messages[1]).toBe(previous.messages[1]);
        expect(Object.isFrozen(got.messages[1])).toBe(true);
        expect(got.messages).not.toBe(previous.messages);
      }
      previous = got;
    }
  });

  it("never lets a caller's change to a body reach the next body", () => {
    const chains = new BodyChains();
    const messages = [message(0), message(1)];
    const first = chains.parse(JSON.stringify({ model: "m", messages })) as {
      messages: { content: string }[];
    };
    // Changed before the chain was proven: the proof sees it and parses in full.
    first.messages[0]!.content = "changed";
    messages.push(message(2));
    const second = chains.parse(JSON.stringify({ model: "m", messages })) as typeof first;
    expect(second.messages[0]!.content).toBe(messages[0]!.content);
    messages.push(message(3));
    const third = chains.parse(JSON.stringify({ model: "m", messages })) as typeof first;
    expect(() => {
      third.messages[0]!.content = "changed";
    }).toThrow(TypeError);
    third.messages.push({ content: "pushed" }); // the body's own array: the chain's is another
    messages.push(message(4));
    const text = JSON.stringify({ model: "m", messages });
    expectSame(chains.parse(text), JSON.parse(text));
  });

  it("gives JSON.parse's answer on bodies that only look like an extension", () => {
    const m = (i: number) => JSON.stringify(message(i));
    const head = '{"model":"m","messages":[';
    const cases = [
      // A later duplicate key wins in JSON.parse.
      `${head}${m(0)},${m(1)},${m(2)}],"temperature":0,"messages":[${m(9)}]}`,
      // A trailing comma: invalid, though the part after the earlier messages parses.
      `${head}${m(0)},${m(1)},]}`,
      // Numbers as JSON.stringify never writes them, -0 among them.
      `${head}${m(0)},${m(1)},{"role":"user","content":"x","n":-0,"f":1.50,"e":1E2}],"temperature":0}`,
      // Whitespace after the earlier messages.
      `${head}${m(0)},${m(1)} , ${m(2)} ],"temperature":0}`,
      // A key spelled with an escape, and a member changed after the array.
      `${head}${m(0)},${m(1)},${m(2)}],"temperature":1,"m\\u0065ssages":[]}`,
      // Not JSON after the earlier messages.
      `${head}${m(0)},${m(1)}${m(2)}],"temperature":0}`,
      `${head}${m(0)},${m(1)},${m(2)}],"temperature":0`,
    ];
    for (const text of cases) {
      const chains = new BodyChains();
      const start = `${head}${m(0)},${m(1)}],"temperature":0}`;
      expectSame(chains.parse(start), JSON.parse(start));
      expectSame(
        outcome((t) => chains.parse(t), text),
        outcome(JSON.parse, text),
      );
      // And the chain still answers exactly afterwards.
      const next = `${head}${m(0)},${m(1)},${m(2)},${m(3)}],"temperature":0}`;
      expectSame(chains.parse(next), JSON.parse(next));
    }
  });

  it("equals JSON.parse on random loops, formats and interleavings", () => {
    const value: fc.Arbitrary<Json> = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: "small" },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom(-0, 0, 1e21, 5e-324),
        fc.string({ unit: "binary" }),
        fc.array(tie("v"), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom("role", "content", "__proto__", "a", "1", ""), tie("v"), {
          maxKeys: 3,
        }),
      ),
    })).v as fc.Arbitrary<Json>;
    // How a body is written: as the SDKs do, or otherwise.
    const formats = [
      (b: Json) => JSON.stringify(b),
      (b: Json) => JSON.stringify(b),
      (b: Json) => JSON.stringify(b),
      (b: Json) => JSON.stringify(b),
      (b: Json) => JSON.stringify(b),
      (b: Json) => JSON.stringify(b, null, 1),
      (b: Json) => `${JSON.stringify(b).slice(0, -1)},"messages":[]}`,
      (b: Json) => JSON.stringify(b).replace(/\],"/, '],,"'),
      (b: Json) => JSON.stringify(b).replace(/\]}$/, ",]}"),
      (b: Json) => JSON.stringify(b).replace(/(\d)\]/, "$1.0]"),
      (b: Json) => JSON.stringify(b).replace(/"content":0/, '"content":-0'),
    ];
    const step = fc.record({
      loop: fc.nat(3),
      add: fc.array(value, { maxLength: 3 }),
      format: fc.nat(formats.length - 1),
      // Mostly each loop's own field and model, so that most bodies extend the one before.
      field: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        fc.constantFrom("messages", "input", "contents", "prompt"),
      ),
      before: fc.oneof({ weight: 6, arbitrary: fc.constant("m" as Json) }, fc.option(value)),
      after: fc.option(value),
    });
    const FIELDS = ["messages", "messages", "input", "contents"];
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        const chains = new BodyChains();
        const loops: Json[][] = [[], [], [], []];
        for (const s of steps) {
          const conversation = loops[s.loop]!;
          conversation.push(...s.add);
          const body: Record<string, Json> = {};
          if (s.before !== null) body.model = s.before;
          body[s.field ?? FIELDS[s.loop]!] = conversation;
          if (s.after !== null) body.temperature = s.after;
          const text = formats[s.format]!(body);
          expectSame(
            outcome((t) => chains.parse(t), text),
            outcome(JSON.parse, text),
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});
