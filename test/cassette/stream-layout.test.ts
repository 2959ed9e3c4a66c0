/**
 * Streamed recordings read one line per event: every `{ t, data }` event is
 * one flow-style line however long (an OpenAI chunk used to take ~8 block
 * lines), the text re-emits byte for byte, both readers read it, and
 * cassettes written in the old block layout still load to the same items.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { emitCassette } from "../../src/cassette/emit.js";
import { parseEmitted } from "../../src/cassette/fast-parse.js";
import type { CassetteItem } from "../../src/cassette/item.js";
import { parseCassette } from "../../src/cassette/parse.js";
import { manifestIdentity } from "../../src/identity/identity.js";
import { entryKey } from "../../src/store/envelope.js";
import type { JsonValue } from "../../src/store/types.js";
import { jsonValue, makeEntry, trickyString } from "./helpers.js";

const src = { file: "/x/s.yaml", display: "s.yaml", url: "cassette://s.yaml" };

function streamItem(events: Array<{ t: number; data: JsonValue }>): CassetteItem {
  const { entry } = makeEntry("Stream the plan", {
    kind: "stream",
    head: { status: 200, headers: { "content-type": "text/event-stream" } },
    events,
  });
  entry.id = manifestIdentity(entry.manifest);
  return { key: entryKey("default", entry.id, 0), value: entry as never };
}

/** OpenAI chat-completion chunks, as the fetch adapter records them. */
function openAiEvents(words: readonly string[]): Array<{ t: number; data: JsonValue }> {
  return words.map((w, i) => ({
    t: i * 12.5,
    data: {
      json: {
        id: "chatcmpl-abc123",
        object: "chat.completion.chunk",
        created: 1764580000,
        model: "gpt-5-mini",
        system_fingerprint: "fp_0123456789",
        choices: [
          {
            index: 0,
            delta: i === 0 ? { role: "assistant", content: w } : { content: w },
            logprobs: null,
            finish_reason: i === words.length - 1 ? "stop" : null,
          },
        ],
      },
    },
  }));
}

/** The lines of the `events:` list of the single entry in `text`. */
function eventLines(text: string): string[] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.trim() === "events:");
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith("        ")) break;
    out.push(line);
  }
  return out;
}

describe("stream events in a cassette", () => {
  it("writes each OpenAI chunk on one line, byte-stable on re-record, read by both readers", () => {
    const words = "Read the code , then change it and add the tests ; done .\n".split(" ");
    const items = [streamItem(openAiEvents(words))];
    const text = emitCassette(items);
    const lines = eventLines(text);
    expect(lines).toHaveLength(words.length);
    for (const line of lines)
      expect(line).toMatch(/^ {8}- \{ t: [\d.]+, data: \{ json: \{ .* \} \} \}$/);
    expect(lines[words.length - 1]).toContain('content: ".\\n"');
    expect(emitCassette(parseCassette(text, src))).toBe(text);
    expect(parseEmitted(text)).toStrictEqual(parseDocument(text, { version: "1.2" }).toJS());
    expect(parseCassette(text, src)).toStrictEqual(items);
  });

  it("keeps one line per event and exact values for any event data", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.oneof(trickyString, jsonValue)),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        (raw) => {
          const events = raw.map(([t, data]) => ({ t: Math.round(t * 10) / 10, data }));
          const items = [streamItem(events)];
          const text = emitCassette(items);
          expect(eventLines(text)).toHaveLength(events.length);
          const back = parseCassette(text, src);
          expect(back).toStrictEqual(items);
          expect(emitCassette(back)).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  }, 180_000);

  it("reads a cassette written in the old block layout to the same items, and rewrites it one line per event", () => {
    const items = [streamItem(openAiEvents(["Hello", " world"]))];
    const text = emitCassette(items);
    const old = text.replace(
      eventLines(text).join("\n"),
      [0, 1]
        .map(
          (i) =>
            `        - t: ${i * 12.5}\n          data:\n            json:\n              id: chatcmpl-abc123\n              object: chat.completion.chunk\n              created: 1764580000\n              model: gpt-5-mini\n              system_fingerprint: fp_0123456789\n              choices:\n                - index: 0\n                  delta:\n${i === 0 ? "                    role: assistant\n                    content: Hello\n" : '                    content: " world"\n'}                  logprobs: null\n                  finish_reason: ${i === 1 ? "stop" : "null"}`,
        )
        .join("\n"),
    );
    expect(old).not.toBe(text);
    expect(old.split("\n").length).toBeGreaterThan(text.split("\n").length + 20);
    expect(parseEmitted(old)).not.toBeUndefined(); // the old layout is in the fast subset too
    const back = parseCassette(old, src);
    expect(back).toStrictEqual(items);
    expect(emitCassette(back)).toBe(text);
  });
});
