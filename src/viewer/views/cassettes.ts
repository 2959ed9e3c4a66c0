/**
 * Cassettes: a folder of cassettes as a tree; per cassette its entries, the
 * stale ones (older than `--max-age`) and the unused ones: entries that no
 * run record in that cassette served. A run record is the trajectory of the
 * last run with that run id (a replay that took the same trajectory used
 * exactly those entries; a different one fails or rewrites it), so this is
 * the usage of the last run, persisted. A cassette without a run record
 * (`withCassette` without `runId`) has no usage to show, and says so.
 */
import type { CatalogSnapshot, EntrySummary, RunRecord } from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import { type Links, paths } from "../links.js";
import { formatBytes, plural, short, when } from "./common.js";
import { entryTable } from "./overview.js";

interface Dir {
  name: string;
  dirs: Map<string, Dir>;
  files: CatalogSnapshot["cassettes"];
}

export function cassettesView(
  links: Links,
  snap: CatalogSnapshot,
  root: string,
  maxAgeMs: number | undefined,
  now = Date.now(),
): SafeHtml {
  const tree: Dir = { name: "", dirs: new Map(), files: [] };
  for (const f of snap.cassettes) {
    const parts = f.path.split("/");
    let d = tree;
    for (const p of parts.slice(0, -1)) {
      let next = d.dirs.get(p);
      if (next === undefined) {
        next = { name: p, dirs: new Map(), files: [] };
        d.dirs.set(p, next);
      }
      d = next;
    }
    d.files.push(f);
  }
  const stale = (recordedAt: string) =>
    maxAgeMs !== undefined && now - Date.parse(recordedAt) > maxAgeMs;
  const days = maxAgeMs === undefined ? "" : `${Math.round(maxAgeMs / 86_400_000)} days`;
  const idList = (rows: EntrySummary[]) =>
    html`${rows.map((e) => html`<a class="id" href="${links.to(paths.entry(e.key, e.file))}">${short(e.id)}</a> <span class="legend">${e.tool !== undefined ? `⚙ ${e.tool}` : e.role} · attempt ${e.attempt}</span> `)}`;
  const render = (d: Dir): SafeHtml =>
    html`<ul class="tree">${[...d.dirs.values()].map((c) => html`<li>📁 <strong>${c.name}/</strong>${render(c)}</li>`)}${d.files.map(
      (f) => {
        const rows = snap.entries.filter((e) => e.file === f.path);
        const old = rows.filter((e) => stale(e.recordedAt));
        const runs = snap.runs.filter((r) => r.file === f.path);
        const unused = runs.length === 0 ? undefined : unusedBy(rows, runs);
        return html`<li><details class="fold"${old.length > 0 || (unused?.length ?? 0) > 0 ? " open" : ""}><summary>📄 ${f.path.split("/").pop()} · ${plural(f.entries, "entry", "entries")} · ${formatBytes(f.bytes)} · modified ${when(f.modifiedAt)}${old.length > 0 ? html` <span class="badge miss">⚠ ${old.length} stale</span>` : ""}${unused !== undefined && unused.length > 0 ? html` <span class="badge plain">◌ ${unused.length} unused</span>` : ""}${f.problem ? html` <span class="badge rejected">✗ unreadable</span>` : ""}</summary>${
          f.problem
            ? html`<pre class="code">${f.problem}</pre>`
            : html`${entryTable(links, rows, `cassette-${f.path}`)}<dl class="kv usage">${
                maxAgeMs === undefined
                  ? ""
                  : html`<dt>stale</dt><dd>${old.length === 0 ? `none older than ${days}` : html`older than ${days}: ${idList(old)}`}</dd>`
              }<dt>unused</dt><dd>${
                unused === undefined
                  ? html`unknown: no run record in this cassette (pass <code>runId</code> to <code>withCassette</code> to keep the run's usage)`
                  : unused.length === 0
                    ? html`none: the last run (${runs.map((r) => r.runId).join(", ")}, ended ${when(runs[0]!.endedAt)}) used every entry`
                    : html`not served by the last run (${runs.map((r) => r.runId).join(", ")}): ${idList(unused)} · <code>withCassette(…, { prune: true })</code> drops them when the test passes`
              }</dd></dl>`
        }</details></li>`;
      },
    )}</ul>`;
  return html`<h1>Cassettes</h1>
<p class="sub">${root} · ${plural(snap.cassettes.length, "cassette")} · ${plural(snap.entries.length, "entry", "entries")}${maxAgeMs === undefined ? " · pass --max-age to mark stale entries" : ` · stale: older than ${Math.round(maxAgeMs / 86_400_000)} days`}</p>
${snap.cassettes.length === 0 ? html`<div class="empty">No cassettes here.</div>` : html`<div class="panel">${render(tree)}</div>`}`;
}

/** Entries of a cassette that none of its run records served. */
function unusedBy(rows: EntrySummary[], runs: RunRecord[]): EntrySummary[] {
  const used = new Set<string>();
  for (const r of runs)
    for (const c of r.calls) used.add(`${r.namespace}:e:${c.id}:${c.occurrence}`);
  return rows.filter((e) => !used.has(e.key));
}
