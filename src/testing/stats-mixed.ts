/**
 * A mixed set of stored values for the tests of stored stats
 * (`Store.statsMeta`, `invocache stats`): several roles, models and tools,
 * usage of every kind (none, plain, cached, a response model, cache counts
 * that exceed the input, a tiered price past its tier), verdicts, repeated
 * occurrences, fractional durations, a run record, a problem and a value
 * that is neither. Every backend is given the same values, so their stats
 * must agree to the digit.
 */
import { invocationManifest, manifestIdentity } from "../identity/index.js";
import { toolManifest, toolManifestV1 } from "../identity/internal.js";
import type { JsonValue } from "../json/index.js";
import { NORMALIZATION_VERSION } from "../normalize/index.js";
import { type Entry, entryKey, type Usage } from "../store/index.js";
import { INVOCACHE_VERSION } from "../version.js";

const ROOTS = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

interface Spec {
  role: string;
  /** A model call to this model, or a tool call. */
  model?: string;
  tool?: { server?: string; name: string; v1?: boolean };
  usage?: Usage;
  durationMs: number;
  recordedAt: string;
  verdict?: "accepted" | "rejected";
  occurrence?: number;
}

const u = (inputTokens: number, outputTokens: number, more: Partial<Usage> = {}): Usage => ({
  shape: "openai.chat",
  inputTokens,
  outputTokens,
  ...more,
});

/** The calls, in no particular order; `prompt` is derived from the index. */
const SPECS: Spec[] = [
  {
    role: "planner",
    model: "gpt-4o-mini",
    usage: u(2000, 500),
    durationMs: 12.345,
    recordedAt: "2026-01-02T00:00:00.000Z",
  },
  {
    role: "planner",
    model: "gpt-4o-mini",
    usage: u(1000, 1000, { cacheReadTokens: 300 }),
    durationMs: 0.1,
    recordedAt: "2026-01-05T10:00:00.000Z",
    verdict: "accepted",
  },
  {
    role: "planner",
    model: "gpt-4o-mini",
    usage: u(7, 3),
    durationMs: 0.2,
    recordedAt: "2026-01-05T10:00:00.000Z",
    occurrence: 1,
  },
  {
    role: "builder",
    model: "gpt-4o",
    usage: u(1234, 56, { model: "gpt-4o-2024-08-06" }),
    durationMs: 1500.25,
    recordedAt: "2026-01-03T08:30:00.000Z",
    verdict: "rejected",
  },
  {
    role: "builder",
    model: "gpt-4o",
    durationMs: 3.3,
    recordedAt: "2025-12-31T23:59:59.999Z",
  },
  {
    role: "builder",
    model: "gemini-2.5-pro",
    usage: u(300_000, 1000, { shape: "gemini.generateContent" }),
    durationMs: 20_000.5,
    recordedAt: "2026-01-04T00:00:00.000Z",
  },
  {
    role: "builder",
    model: "gemini-2.5-pro",
    usage: u(1000, 10, { shape: "gemini.generateContent", cacheReadTokens: 200 }),
    durationMs: 250.125,
    recordedAt: "2026-01-04T00:00:01.000Z",
  },
  {
    role: "critic",
    model: "claude-3-5-haiku-20241022",
    usage: u(900, 40, {
      shape: "anthropic.messages",
      cacheReadTokens: 100,
      cacheWriteTokens: 50,
    }),
    durationMs: 410.7,
    recordedAt: "2026-01-06T00:00:00.000Z",
    verdict: "accepted",
  },
  {
    role: "critic",
    model: "gpt-4o-mini",
    // Cache counts past the input: the price table refuses it (unpriced).
    usage: u(10, 1, { cacheReadTokens: 20 }),
    durationMs: 1,
    recordedAt: "2026-01-06T00:00:01.000Z",
  },
  {
    role: "critic",
    model: "sim-1",
    usage: u(30, 7),
    durationMs: 7.77,
    recordedAt: "2026-01-07T00:00:00.000Z",
  },
  {
    role: "reviewer",
    model: "gpt-4o-mini",
    usage: u(1, 1),
    durationMs: 0.3,
    recordedAt: "2026-01-07T00:00:01.000Z",
  },
  {
    role: "critic",
    // Fractions of a nanodollar per token: priced one call at a time.
    model: "openrouter:deepseek/deepseek-v4-flash",
    usage: u(1001, 33),
    durationMs: 55.555,
    recordedAt: "2026-01-07T12:00:00.000Z",
  },
  {
    role: "planner",
    model: "gemini-1.5-flash",
    usage: u(77, 5, { shape: "gemini.generateContent", cacheReadTokens: 10 }),
    durationMs: 4.001,
    recordedAt: "2026-01-07T12:00:01.000Z",
  },
  {
    role: "tools",
    tool: { server: "fs", name: "read_file" },
    durationMs: 2.5,
    recordedAt: "2026-01-08T00:00:00.000Z",
  },
  {
    role: "tools",
    tool: { name: "search" },
    durationMs: 0.75,
    recordedAt: "2026-01-08T00:00:01.000Z",
  },
  {
    role: "tools",
    tool: { name: "search", v1: true },
    durationMs: 0.125,
    recordedAt: "2026-01-08T00:00:02.000Z",
  },
];

function entryOf(spec: Spec, prompt: string): Entry {
  const manifest =
    spec.tool === undefined
      ? invocationManifest({ role: spec.role, model: spec.model!, prompt }, ROOTS)
      : (spec.tool.v1 ? toolManifestV1 : toolManifest)(
          {
            kind: "tool",
            name: spec.tool.name,
            server: spec.tool.server ?? "",
            args: { q: prompt },
            role: spec.role,
          },
          ROOTS,
        );
  return {
    v: 1,
    id: manifestIdentity(manifest),
    manifest,
    response: { text: `answer to ${prompt}` },
    meta: {
      recordedAt: spec.recordedAt,
      durationMs: spec.durationMs,
      ...(spec.usage === undefined ? {} : { usage: spec.usage }),
      ...(spec.verdict === undefined
        ? {}
        : { verdict: { verdict: spec.verdict, at: spec.recordedAt } }),
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: spec.occurrence ?? 0,
      attempt: 0,
    },
  } as Entry;
}

/**
 * The mixed values for namespace `ns` (`tag` makes the prompts, so the ids,
 * its own). An entry with `occurrence: 1` repeats the id of the one before
 * it, so there are fewer ids than entries.
 *
 * @example
 * for (const { key, value } of mixedStatsRows("ns1")) await store.set(key, value);
 */
export function mixedStatsRows(ns: string, tag = ns): Array<{ key: string; value: JsonValue }> {
  const rows: Array<{ key: string; value: JsonValue }> = [];
  let previousPrompt = "";
  for (const [i, spec] of SPECS.entries()) {
    const prompt = spec.occurrence ? previousPrompt : `${tag} prompt ${i}`;
    previousPrompt = prompt;
    const entry = entryOf(spec, prompt);
    rows.push({
      key: entryKey(ns, entry.id, entry.meta.occurrence),
      // cast: an Entry is an interface (no index signature) of JSON data: stored as the JSON value it is.
      value: entry as unknown as JsonValue,
    });
  }
  rows.push({ key: `${ns}:run:r1`, value: { runId: "r1" } });
  rows.push({ key: entryKey(ns, "ab".repeat(32), 0), value: { not: "an entry" } });
  rows.push({ key: `${ns}:other`, value: [1, 2, 3] });
  return rows;
}
