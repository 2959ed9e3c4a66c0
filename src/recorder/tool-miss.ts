/**
 * Replay misses of tool calls: name the tool and the nearest recordings of
 * the same tool, field by field (args, attempt, role…), like a model miss.
 */
import { explainIdentity, type ToolManifest } from "../identity/index.js";
import { asToolManifest, callKind } from "../identity/internal.js";
import { diffJson, formatDiffs } from "../json/index.js";
import type { Store } from "../store/index.js";
import { ReplayMissError } from "./errors.js";
import { DEFAULT_RERECORD, recordedEntries } from "./miss-report.js";

const NEAREST = 3;

export interface ToolMissContext {
  store: Store;
  namespace: string;
  id: string;
  occurrence: number;
  mode: string;
  manifest: ToolManifest;
  rerecord?: string | undefined;
}

export async function toolMissError(ctx: ToolMissContext): Promise<ReplayMissError> {
  const m = ctx.manifest;
  const recordedOccurrences: number[] = [];
  const near: Array<{ id: string; manifest: ToolManifest; recordedAt: string }> = [];
  const spec = callKind(m);
  for await (const entry of recordedEntries(ctx.store, ctx.namespace)) {
    const other = asToolManifest(entry.manifest);
    if (other === undefined) continue;
    if (entry.id === ctx.id) {
      recordedOccurrences.push(entry.meta.occurrence);
      continue;
    }
    if (spec.related(m, other) && !near.some((n) => n.id === entry.id))
      near.push({ id: entry.id, manifest: other, recordedAt: entry.meta.recordedAt });
  }
  recordedOccurrences.sort((a, b) => a - b);
  const rerecord = ctx.rerecord ?? DEFAULT_RERECORD;
  const lines = [
    `invocache: no recording for tool ${JSON.stringify(m.name)}${m.server ? ` on server ${JSON.stringify(m.server)}` : ""} (${m.method}) call ${ctx.id.slice(0, 12)}, attempt ${m.attempt}, occurrence ${ctx.occurrence} in ${ctx.store.url} [mode ${ctx.mode}]`,
  ];
  if (recordedOccurrences.length > 0) {
    lines.push(
      `  This tool call is recorded as occurrence ${recordedOccurrences.join(", ")}: the step called it more often than when it was recorded.`,
    );
  } else if (near.length === 0) {
    lines.push("  No other call of this tool is recorded in this namespace.");
  }
  const nearest = near.slice(0, NEAREST).map((n, i) => {
    const diffs = diffJson(n.manifest, m);
    lines.push(`  Nearest ${i + 1}: ${n.id.slice(0, 12)} (recorded ${n.recordedAt}) differs in:`);
    lines.push(formatDiffs(diffs).replace(/^ {2}/gm, "    - "));
    return {
      id: n.id,
      occurrence: 0,
      recordedAt: n.recordedAt,
      diffs: explainIdentity(n.manifest, m),
    };
  });
  lines.push(`  To record it: ${rerecord}`);
  return new ReplayMissError(
    {
      id: ctx.id,
      occurrence: ctx.occurrence,
      mode: ctx.mode,
      store: ctx.store.url,
      manifest: m,
      recordedOccurrences,
      nearest,
      rulesFired: {},
      rerecord,
    },
    lines.join("\n"),
  );
}
