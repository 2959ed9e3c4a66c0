/**
 * Shared by the cassette tests: entries built the way the recorder builds
 * them, tricky strings, temp folders.
 */
import fc from "fast-check";
import { manifestIdentity } from "../../src/identity/identity.js";
import { invocationManifest } from "../../src/identity/manifest.js";
import type { Entry } from "../../src/store/envelope.js";
import { entryKey } from "../../src/store/envelope.js";
import type { JsonValue } from "../../src/store/types.js";

export { tempDir } from "../helpers/tmp.js";

/** Normalization that depends on nothing of this machine. */
export const MACHINE = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

/** An entry for `prompt` as the recorder would store it, and its key. */
export function makeEntry(
  prompt: string,
  response: JsonValue,
  opts: {
    task?: string;
    attempt?: number;
    occurrence?: number;
    namespace?: string;
    recordedAt?: string;
    durationMs?: number;
  } = {},
): { key: string; entry: Entry } {
  const manifest = invocationManifest(
    { role: "builder", model: "gpt-5", prompt, task: opts.task ?? "T-1" },
    { ...MACHINE, attempt: opts.attempt ?? 0 },
  );
  const id = manifestIdentity(manifest);
  const occurrence = opts.occurrence ?? 0;
  const entry: Entry = {
    v: 1,
    id,
    manifest,
    response,
    meta: {
      recordedAt: opts.recordedAt ?? "2026-01-31T12:00:00.000Z",
      durationMs: opts.durationMs ?? 812.5,
      normalization: 1,
      invocacheVersion: "0.1.0",
      occurrence,
      attempt: manifest.attempt,
    },
  };
  return { key: entryKey(opts.namespace ?? "default", id, occurrence), entry };
}

/** Pieces that break naive YAML: indicators, whitespace at the edges, line breaks of every kind. */
const TRICKY = [
  "\n",
  "\n\n",
  "\r",
  "\r\n",
  "\t",
  " ",
  "  ",
  "#",
  " #",
  ": ",
  ":",
  "- ",
  "---",
  "...",
  "|",
  "|-",
  ">",
  "'",
  '"',
  "\\",
  "{",
  "}",
  "[",
  "]",
  ",",
  "&a",
  "*a",
  "!",
  "!!str",
  "%",
  "@",
  "`",
  "?",
  "~",
  "null",
  "true",
  "yes",
  "0x1F",
  "0o17",
  ".inf",
  ".nan",
  "1e3",
  "-0",
  "\u0000",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ufffe",
  "\uffff",
  "\ud800",
  "\udfff",
  "\ud83d\ude00",
  "e\u0301",
  "日本語",
  "עברית",
  "{secret:X}",
];

/** Any code unit, lone surrogates included, mixed with the tricky pieces above. */
export const unit: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 3, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 3 }) },
);

/** Mostly blanks and line breaks: where block scalars go wrong. */
const blankUnit = fc.constantFrom(
  " ",
  "  ",
  "\t",
  "\n",
  "\n\n",
  "x",
  "\u3000",
  "\u00a0",
  "\r\n",
  "#",
  "- ",
);

/** Strings built from {@link unit}: multi-line, edge whitespace, control characters, surrogates. */
export const trickyString: fc.Arbitrary<string> = fc
  .oneof(fc.array(unit, { maxLength: 24 }), fc.array(blankUnit, { maxLength: 12 }))
  .map((parts) => parts.join(""));

/** A JSON value as a store sees it (after a JSON round trip: no -0). */
export const jsonValue: fc.Arbitrary<JsonValue> = fc
  .jsonValue({ stringUnit: unit, maxDepth: 4 })
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);
