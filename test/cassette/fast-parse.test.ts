/**
 * The fast reader (src/cassette/fast-parse.ts) against the full `yaml`
 * parser: on everything our writer emits, the two give deep-equal values
 * (property tests with fast-check); ordinary cassettes always take the fast
 * path; hand-edited variants (comments, quotes, anchors, tags, other
 * indentation, CRLF…) fall back and still load to the same items; broken
 * cassettes keep their CassetteError with line and column.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { emitCassette } from "../../src/cassette/emit.js";
import { parseEmitted } from "../../src/cassette/fast-parse.js";
import type { CassetteItem } from "../../src/cassette/item.js";
import { parseCassette } from "../../src/cassette/parse.js";
import { CassetteError } from "../../src/errors.js";
import { manifestIdentity } from "../../src/identity/identity.js";
import { entryKey } from "../../src/store/envelope.js";
import { modelOf } from "../helpers/model-manifest.js";
import { jsonValue, makeEntry, trickyString } from "./helpers.js";

const src = { file: "/x/t.yaml", display: "t.yaml", url: "cassette://t.yaml" };

/** What the full parser makes of `text`, with the loader's settings. */
function full(text: string): unknown {
  const doc = parseDocument(text, {
    version: "1.2",
    schema: "core",
    merge: false,
    uniqueKeys: true,
    strict: true,
  });
  expect(doc.errors).toEqual([]);
  return doc.toJS({ maxAliasCount: 100 });
}

/** An entry whose manifest holds `prompt` as given (its id recomputed), answering `response`. */
function entryItem(prompt: string, task: string, response: unknown): CassetteItem {
  const { entry } = makeEntry("p", response as never);
  modelOf(entry.manifest).prompt = prompt;
  entry.manifest.task = task;
  entry.id = manifestIdentity(entry.manifest);
  return { key: entryKey("default", entry.id, 0), value: entry as never };
}

/** A cassette as the recorder writes them: plain answers, a streamed one, a run record. */
function ordinaryCassette(): CassetteItem[] {
  const items: CassetteItem[] = [];
  for (let i = 0; i < 20; i++) {
    const text = `Done step ${i}.\nChanged 3 files:\n  - src/a.ts\n  - src/b.ts\n`;
    items.push(
      entryItem(`Request ${i}: ${"build the thing ".repeat(8)}`, `T-${i}`, {
        id: `resp_${i}`,
        output: [{ type: "message", role: "assistant", content: text }],
        usage: { input_tokens: 1024 + i, output_tokens: 64 },
        empty: {},
        none: [],
        ratio: 0.25,
        flag: i % 2 === 0,
        missing: null,
      }),
    );
  }
  const chunk = (n: number, content: string) => ({
    json: {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1764580000,
      model: "gpt-5",
      choices: [{ index: 0, delta: { content }, finish_reason: n === 3 ? "stop" : null }],
    },
  });
  items.push(
    entryItem("Stream the plan", "T-s", {
      kind: "stream",
      head: { status: 200, headers: { "content-type": "text/event-stream" } },
      events: [
        { t: 0, data: chunk(0, "Hello") },
        { t: 1.5, data: chunk(1, ' world, "quoted": yes #1') },
        { t: 2, data: chunk(2, "\n") },
        { t: 3, data: chunk(3, "") },
        { t: 3.1, data: { data: "[DONE]" } },
      ],
    }),
  );
  items.push({ key: "default:run:r1", value: { started: "2026-01-31T12:00:00.000Z", n: 3 } });
  items.push({ key: "default:lease:x", value: { until: 12 }, expires: 1_800_000_000_000 });
  return items;
}

describe("fast cassette reader", () => {
  it("reads an ordinary cassette itself, to the same value as the yaml parser", () => {
    const text = emitCassette(ordinaryCassette());
    expect(text).toContain("\n        - { t: 0, data: { json: { id: chatcmpl-1, "); // one line per stream event
    const fast = parseEmitted(text);
    expect(fast).not.toBeUndefined();
    expect(fast).toStrictEqual(full(text));
    expect(parseCassette(text, src)).toStrictEqual(ordinaryCassette());
  });

  it("equals the yaml parser on random emitted cassettes, whenever it reads them (and reads nearly all)", () => {
    let fastRead = 0;
    let runs = 0;
    fc.assert(
      fc.property(trickyString, trickyString, jsonValue, fc.nat(80), (prompt, text, value, pad) => {
        const items: CassetteItem[] = [
          entryItem(`${"x".repeat(pad)}${prompt}`, text, {
            text,
            value,
            events: [
              { t: 1, data: text },
              { t: 2, data: { json: value } },
            ],
          }),
          { key: "k:1", value },
          { key: "k:2", value: { [text]: text, list: [text, [text], { text }] } },
        ];
        const emitted = emitCassette(items);
        runs++;
        const fast = parseEmitted(emitted);
        if (fast === undefined) return;
        fastRead++;
        expect(fast).toStrictEqual(full(emitted));
      }),
      { numRuns: 800 },
    );
    // The tricky strings are built to break YAML; still, the fast path must carry almost all.
    expect(fastRead / runs).toBeGreaterThan(0.9);
  }, 180_000);

  const variants: Array<[string, (t: string) => string]> = [
    ["a comment line", (t) => t.replace("entries:\n", "# recorded by hand\nentries:\n")],
    ["a trailing comment", (t) => t.replace("occurrence: 0\n", "occurrence: 0 # first\n")],
    ["a document start marker", (t) => `---\n${t}`],
    ["single quotes", (t) => t.replace("model: gpt-5\n", "model: 'gpt-5'\n")],
    ["an anchor", (t) => t.replace("normalization: 1\n", "normalization: &n 1\n")],
    ["an explicit tag", (t) => t.replace("durationMs: 812.5\n", "durationMs: !!float 812.5\n")],
    ["CRLF line ends", (t) => t.replaceAll("\n", "\r\n")],
    ["a list not indented under its key", (t) => t.replace(/^ {2}/gm, "")],
    ["a list item's first key on the next line", (t) => t.replace("  - id: ", "  -\n    id: ")],
    ["a flow mapping over two lines", (t) => t.replace("{ t: 0, ", "{ t: 0,\n            ")],
    [
      "a folded block",
      (t) =>
        t
          .replace(/content: \|\n/, "content: |\n")
          .replace("status: 200", "status: >-\n          200"),
    ],
    ["an explicit key", (t) => t.replace("occurrence: 0\n", "? occurrence\n    : 0\n")],
    ["no newline at the end", (t) => t.slice(0, -1)],
  ];

  it.each(variants)("falls back to the full parser on %s, with the same result", (_, edit) => {
    const items = ordinaryCassette();
    const text = emitCassette(items);
    const edited = edit(text);
    expect(edited).not.toBe(text);
    expect(parseEmitted(edited)).toBeUndefined();
    const back = parseCassette(edited, src);
    if (_ === "a folded block") {
      // `>-` folds to the same "200", a string now: the full parser read it, exactly as YAML says.
      expect(back.length).toBe(items.length);
      return;
    }
    expect(back).toStrictEqual(items);
  });

  it("keeps every error of the full parser, with line and column, for text in the fast shape", () => {
    const text = emitCassette(ordinaryCassette());
    const cases: Array<[string, string, number]> = [
      // A repeated key (the fast reader gives up, the full parser says where).
      ["repeated key", text.replace("occurrence: 0\n", "occurrence: 0\n    occurrence: 0\n"), 5],
      // A non-string key that would collapse into another.
      ["number key", text.replace("      role: builder\n", "      1: builder\n"), 6],
      // Swapped content: the id no longer matches the manifest.
      ["id mismatch", text.replace("Request 0: build", "Request 9: build"), 3],
    ];
    for (const [what, broken, line] of cases) {
      expect(broken, what).not.toBe(text);
      let error: unknown;
      try {
        parseCassette(broken, src);
      } catch (e) {
        error = e;
      }
      expect(error, what).toBeInstanceOf(CassetteError);
      expect((error as CassetteError).line, what).toBe(line);
      expect((error as CassetteError).column, what).toBeGreaterThan(0);
    }
  });
});
