/**
 * The reuse cache's bound is in bytes of memory (src/identity/normalized-reuse.ts):
 * its own count of what it holds must match what holding it costs the heap,
 * measured as the live heap after full collections with the cache full and
 * after emptying it. Not a timing or RSS assertion: live bytes after a full
 * collection are deterministic enough for a ±10 % band (measured within
 * 1 % for long texts, 4 % for short ones).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  clearNormalizationReuse,
  configureNormalizationReuse,
  DEFAULT_REUSE_BYTES,
  invocationIdentity,
  normalizationReuseStats,
} from "../../src/identity/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

afterEach(() => {
  configureNormalizationReuse({ maxBytes: DEFAULT_REUSE_BYTES });
  clearNormalizationReuse();
});

function liveHeap(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Fill the cache with `n` messages (each a fresh flat string, as JSON.parse
 * gives a request body's strings, referenced by nothing else afterwards);
 * the cache's own count and the heap it holds.
 */
function fill(n: number, text: (i: number) => string): { counted: number; held: number } {
  // Warm, on other texts: the code and the tables the rules build on first
  // use are not the cache's (nor anything kept for the texts measured).
  for (let i = 1; i <= 2; i++) {
    for (let j = 0; j < n; j++) {
      const messages = JSON.parse(
        JSON.stringify([{ role: "user", content: text(j + i * 1_000_000) }]),
      );
      invocationIdentity({ role: "r", conversation: messages, projectPath: "/work/p" });
    }
    clearNormalizationReuse();
  }
  for (let i = 0; i < n; i++) {
    const messages = JSON.parse(JSON.stringify([{ role: "user", content: text(i) }]));
    invocationIdentity({ role: "r", conversation: messages, projectPath: "/work/p" });
  }
  const counted = normalizationReuseStats().bytes;
  const full = liveHeap();
  clearNormalizationReuse();
  const empty = liveHeap();
  return { counted, held: full - empty };
}

const body = (i: number, filler: string) =>
  `Turn ${i}: edit /work/p/src/f${i}.ts at 2026-09-09T10:00:00Z, "quoted"\nline two ${filler.repeat(40)}`;

describe("the reuse cache's byte count", () => {
  // Optimized code made during the first fills is heap too, and stays after
  // the cache is emptied: one fill of each kind first.
  beforeAll(() => {
    for (const filler of ["plain words cafe ", "arrows → and ✓ ", "plain words café "])
      fill(2000, (i) => body(i + 5_000_000, filler));
    fill(10_000, (i) => `w ${i}`);
  });

  for (const [label, filler, n] of [
    ["ASCII text (one byte per character in V8)", "plain words cafe ", 2000],
    ["text beyond Latin-1 (two bytes per character)", "arrows → and ✓ ", 2000],
    ["short strings (headers and entries dominate)", undefined, 10_000],
  ] as const) {
    it(`matches the heap it holds: ${label}`, () => {
      const { counted, held } = fill(n, (i) => (filler === undefined ? `m ${i}` : body(i, filler)));
      expect(counted / held).toBeGreaterThan(0.9);
      expect(counted / held).toBeLessThan(1.1);
    });
  }

  it("never counts less than it holds for Latin-1 text (V8 may keep it at one byte or two)", () => {
    const { counted, held } = fill(2000, (i) => body(i, "plain words café "));
    expect(counted / held).toBeGreaterThan(0.85);
    expect(counted / held).toBeLessThan(2.1);
  });
});
