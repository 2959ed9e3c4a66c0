/**
 * Misses: the replay misses the miss log kept, newest first, each beside
 * its nearest recordings (same namespace and role) with explain's field
 * diff and the command that re-records it.
 */
import { asModelManifest, type CallKind, kindOf } from "../../identity/internal.js";
import {
  type Catalog,
  type CatalogSnapshot,
  type EntrySummary,
  toolLabel,
  toolOf,
} from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import { type Links, paths } from "../links.js";
import type { MissRecord } from "../miss-log.js";
import { short, verdictBadge, when } from "./common.js";
import { fieldList, manifestDiffs } from "./diff.js";

const SHOWN = 25;
const CANDIDATES = 40;

interface Nearest {
  key: string;
  id: string;
  attempt: number;
  verdict: string | undefined;
  diffs: ReturnType<typeof manifestDiffs>;
}

/**
 * The newest recordings of a namespace with a role and kind (but not the
 * identity `exceptId`), at most `limit`: from a snapshot, or one metadata
 * query (meta-catalog.ts) that stops when it has them.
 */
export type CandidateFinder = (
  namespace: string,
  role: string,
  kind: CallKind,
  exceptId: string,
  limit: number,
) => Promise<EntrySummary[]>;

/** {@link CandidateFinder} over a snapshot (every value read). */
export function snapshotCandidates(snap: CatalogSnapshot): CandidateFinder {
  return async (namespace, role, kind, exceptId, limit) =>
    snap.entries
      .filter(
        (e) => e.namespace === namespace && e.role === role && e.kind === kind && e.id !== exceptId,
      )
      .slice(0, limit);
}

async function nearest(
  catalog: Catalog,
  candidatesOf: CandidateFinder,
  miss: MissRecord,
): Promise<Nearest[]> {
  const manifest = miss.manifest;
  if (manifest === undefined) return [];
  const namespace = miss.key.split(":")[0] ?? "";
  // A tool call is compared with recordings of tool calls, a model call with model calls.
  const kind = kindOf(manifest);
  const candidates = await candidatesOf(namespace, manifest.role, kind, miss.id, CANDIDATES);
  const out: Nearest[] = [];
  for (const c of candidates) {
    const entry = await catalog.entry(c.key).catch(() => undefined);
    if (entry === undefined) continue;
    out.push({
      key: c.key,
      id: c.id,
      attempt: c.attempt,
      verdict: c.verdict,
      diffs: manifestDiffs(entry.manifest, manifest),
    });
  }
  return out.sort((a, b) => a.diffs.length - b.diffs.length).slice(0, 2);
}

export async function missesView(
  links: Links,
  catalog: Catalog,
  candidatesOf: CandidateFinder,
  misses: readonly MissRecord[],
  logPath: string,
): Promise<SafeHtml> {
  const shown = misses.slice(0, SHOWN);
  const blocks: SafeHtml[] = [];
  for (const m of shown) {
    const near = await nearest(catalog, candidatesOf, m);
    blocks.push(html`<div class="panel"><div class="head"><span class="badge miss">⚠ miss</span> <strong>${m.manifest?.role ?? "?"}</strong> <span class="id">${short(m.id)}</span> · occurrence ${m.occurrence} · mode ${m.mode} · ${when(m.at)}</div>
<p class="legend">${m.store}${m.manifest ? html` · ${toolOf(m.manifest) === undefined ? `model ${asModelManifest(m.manifest)?.model || "–"}` : `tool ${toolLabel(toolOf(m.manifest)!)}`} · attempt ${m.manifest.attempt}` : ""}</p>
${
  near.length === 0
    ? html`<p>No recording of the same role to compare with.</p>`
    : near.map(
        (n) =>
          html`<h3>Nearest: <a class="id" href="${links.to(paths.entry(n.key))}">${short(n.id)}</a> attempt ${n.attempt} ${n.verdict ? verdictBadge(n.verdict) : ""}</h3>${fieldList(n.diffs)}`,
      )
}
<p class="legend">Re-record it: run the same test or pipeline with <code>INVOCACHE_MODE=record</code>.</p></div>`);
  }
  return html`<h1>Misses</h1>
<p class="sub">Replay misses kept in <code>${logPath}</code> (the newest ${misses.length}; ignored by git). A recorder logs its replay misses here by default (its <code>missLog</code> option).</p>
${shown.length === 0 ? html`<div class="empty">No misses logged. A recorder logs each replay miss here by default; none happened since the log began.</div>` : blocks}`;
}
