/**
 * Miss reports: what a person needs to fix a replay miss without guessing.
 * Runs only on the miss path, so it may list the namespace (bounded).
 */

import type { ModelManifest } from "../identity/index.js";
import { explainIdentity } from "../identity/index.js";
import { asModelManifest } from "../identity/internal.js";
import type { Store } from "../store/index.js";
import { entryPrefix, validateEntry } from "../store/index.js";
import { type MissDetails, type NearestEntry, ReplayMissError } from "./errors.js";
import { loopbackPortHint } from "./loopback-hint.js";

/** At most this many entries are read to find the nearest recordings. */
const SCAN_LIMIT = 5_000;
const NEAREST = 3;

/** The re-record command a miss suggests when the caller names none. */
export const DEFAULT_RERECORD =
  "INVOCACHE_MODE=record <your command>   (or INVOCACHE_MODE=auto to record only what is missing)";

/**
 * The namespace's valid entries, for finding the nearest recordings: at most
 * {@link SCAN_LIMIT} read, malformed ones skipped, and a store that cannot
 * list ends the scan quietly (the report is best effort: the miss itself is
 * what matters).
 */
export async function* recordedEntries(
  store: Store,
  namespace: string,
): AsyncGenerator<ReturnType<typeof validateEntry>> {
  try {
    let seen = 0;
    for await (const [key, value] of store.list(entryPrefix(namespace))) {
      if (++seen > SCAN_LIMIT) return;
      let entry: ReturnType<typeof validateEntry>;
      try {
        entry = validateEntry(value, `${store.url} ${key}`);
      } catch {
        continue;
      }
      yield entry;
    }
  } catch {
    // A store that cannot list still gets the basic message.
  }
}

export interface MissContext {
  store: Store;
  namespace: string;
  id: string;
  occurrence: number;
  mode: string;
  manifest: ModelManifest;
  /** How often each normalization rule fired on the request (`requestRulesFired`). */
  rulesFired: Record<string, number>;
  /** The command that re-records, e.g. from the vitest helper. */
  rerecord?: string | undefined;
  inRun: boolean;
  /** The miss log this miss was appended to, if any (miss-log.ts). */
  loggedTo?: string | undefined;
}

export async function missError(ctx: MissContext): Promise<ReplayMissError> {
  const recordedOccurrences: number[] = [];
  const candidates = new Map<
    string,
    { manifest: ModelManifest; occurrence: number; recordedAt: string }
  >();
  for await (const entry of recordedEntries(ctx.store, ctx.namespace)) {
    const manifest = asModelManifest(entry.manifest);
    if (manifest === undefined) continue; // another kind: another recipe, another report
    if (entry.id === ctx.id) {
      recordedOccurrences.push(entry.meta.occurrence);
      continue;
    }
    const prev = candidates.get(entry.id);
    if (prev === undefined || entry.meta.occurrence < prev.occurrence) {
      candidates.set(entry.id, {
        manifest,
        occurrence: entry.meta.occurrence,
        recordedAt: entry.meta.recordedAt,
      });
    }
  }
  recordedOccurrences.sort((a, b) => a - b);

  // Rank with the cheap score first; word-diff only the few that are shown
  // (a diff of two long prompts costs milliseconds, a store holds thousands).
  const ranked = [...candidates]
    .map(([id, c]) => ({ id, c, score: score(c.manifest, ctx.manifest) }))
    .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id))
    .slice(0, NEAREST);
  const hint = ranked
    .map(({ c }) => loopbackPortHint(c.manifest, ctx.manifest))
    .find((h) => h !== undefined);
  const nearest: NearestEntry[] = ranked.map(({ id, c }) => ({
    id,
    occurrence: c.occurrence,
    recordedAt: c.recordedAt,
    diffs: explainIdentity(c.manifest, ctx.manifest),
  }));

  const rerecord = ctx.rerecord ?? DEFAULT_RERECORD;
  const details: MissDetails = {
    id: ctx.id,
    occurrence: ctx.occurrence,
    mode: ctx.mode,
    store: ctx.store.url,
    manifest: ctx.manifest,
    recordedOccurrences,
    nearest,
    rulesFired: ctx.rulesFired,
    rerecord,
  };
  const logged =
    ctx.loggedTo === undefined
      ? undefined
      : `Logged to ${ctx.loggedTo}: \`invocache view\` lists it under Misses.`;
  return new ReplayMissError(details, render(details, ctx.manifest, ctx.inRun, hint, logged));
}

/** Lower is nearer: differing fields weigh by how surprising they are. */
function score(a: ModelManifest, b: ModelManifest): number {
  let s = 0;
  if (a.role !== b.role) s += 8;
  if (a.model !== b.model) s += 4;
  if (a.task !== b.task) s += 4;
  if (a.prompt !== b.prompt)
    s += 2 + (1 - commonPrefix(a.prompt, b.prompt) / Math.max(1, a.prompt.length, b.prompt.length));
  if (a.attempt !== b.attempt) s += 1;
  if (JSON.stringify(a.params ?? {}) !== JSON.stringify(b.params ?? {})) s += 1;
  if (a.inputs.join("\n") !== b.inputs.join("\n")) s += 1;
  return s;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function render(
  d: MissDetails,
  m: ModelManifest,
  inRun: boolean,
  hint: string | undefined,
  logged?: string,
): string {
  const lines = [
    `invocache: no recording for ${m.role}${m.model ? ` (${m.model})` : ""} call ${d.id.slice(0, 12)}, attempt ${m.attempt}, occurrence ${d.occurrence} in ${d.store} [mode ${d.mode}]`,
  ];
  if (d.recordedOccurrences.length > 0) {
    const list = d.recordedOccurrences.join(", ");
    lines.push(
      inRun
        ? `  This identity is recorded as occurrence ${list}, and this run has already consumed ${d.occurrence === 1 ? "it" : "them"}: the step ran more often than when it was recorded (a repeat is never served an earlier output).`
        : `  This identity is recorded as occurrence ${list}, but not as occurrence ${d.occurrence}.`,
    );
  } else if (d.nearest.length === 0) {
    lines.push("  Nothing similar is recorded in this namespace.");
  }
  d.nearest.forEach((n, i) => {
    lines.push(`  Nearest ${i + 1}: ${n.id.slice(0, 12)} (recorded ${n.recordedAt}) differs in:`);
    for (const diff of n.diffs) {
      lines.push(`    - ${diff.summary}`);
      if (diff.diff !== undefined)
        for (const l of diff.diff.split("\n")) lines.push(`        ${l}`);
    }
  });
  if (hint !== undefined) lines.push(`  ${hint}`);
  const fired = Object.entries(d.rulesFired);
  lines.push(
    fired.length > 0
      ? `  Normalization applied: ${fired.map(([r, n]) => `${r} ×${n}`).join(", ")}`
      : "  Normalization applied: nothing (the prompt had no paths, UUIDs or timestamps to template)",
  );
  lines.push(`  To record it: ${d.rerecord}`);
  if (logged !== undefined) lines.push(`  ${logged}`);
  return lines.join("\n");
}
