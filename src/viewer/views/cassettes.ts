/**
 * Cassettes: a folder of cassettes as a tree; per cassette its entries and
 * the stale ones (older than `--max-age`).
 */
import type { CatalogSnapshot } from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import type { Links } from "../links.js";
import { formatBytes, plural, when } from "./common.js";
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
  const render = (d: Dir): SafeHtml =>
    html`<ul class="tree">${[...d.dirs.values()].map((c) => html`<li>📁 <strong>${c.name}/</strong>${render(c)}</li>`)}${d.files.map(
      (f) => {
        const rows = snap.entries.filter((e) => e.file === f.path);
        const old = rows.filter((e) => stale(e.recordedAt)).length;
        return html`<li><details class="fold"><summary>📄 ${f.path.split("/").pop()} · ${plural(f.entries, "entry", "entries")} · ${formatBytes(f.bytes)} · modified ${when(f.modifiedAt)}${old > 0 ? html` <span class="badge miss">⚠ ${old} stale</span>` : ""}${f.problem ? html` <span class="badge rejected">✗ unreadable</span>` : ""}</summary>${f.problem ? html`<pre class="code">${f.problem}</pre>` : entryTable(links, rows, `cassette-${f.path}`)}</details></li>`;
      },
    )}</ul>`;
  return html`<h1>Cassettes</h1>
<p class="sub">${root} · ${plural(snap.cassettes.length, "cassette")} · ${plural(snap.entries.length, "entry", "entries")}${maxAgeMs === undefined ? " · pass --max-age to mark stale entries" : ` · stale: older than ${Math.round(maxAgeMs / 86_400_000)} days`}</p>
${snap.cassettes.length === 0 ? html`<div class="empty">No cassettes here.</div>` : html`<div class="panel">${render(tree)}</div>`}`;
}
