/**
 * Overview: namespaces, counts, recorded model time, the most recent runs,
 * and every entry, newest first, searchable by id prefix, role, model and
 * text, one page at a time.
 */
import { MIN_PREFIX_LENGTH } from "../../identity/index.js";
import { formatTokens, formatUsd } from "../../usage/index.js";
import type { CatalogSnapshot, EntrySummary, RunRecord } from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import { enc, type Links, paths } from "../links.js";
import { idPrefixMatches, textMatches } from "../snapshot-index.js";
import { type Recorded, runSpend, spendOf } from "../spend.js";
import {
  formatBytes,
  formatMs,
  oneLine,
  pager,
  plural,
  short,
  spendText,
  verdictBadge,
  when,
} from "./common.js";

/** The overview's search: every field optional. */
export interface OverviewQuery {
  q: string;
  role: string;
  model: string;
  namespace: string;
  offset: number;
}

export const PAGE_SIZE = 50;

/** Read the search from URL parameters. */
export function overviewQuery(params: URLSearchParams): OverviewQuery {
  const offset = Number.parseInt(params.get("offset") ?? "0", 10);
  return {
    q: (params.get("q") ?? "").trim(),
    role: params.get("role") ?? "",
    model: params.get("model") ?? "",
    namespace: params.get("ns") ?? "",
    offset: Number.isSafeInteger(offset) && offset > 0 ? offset : 0,
  };
}

/**
 * The entries a search selects. A query of 8+ hex digits matches an id
 * prefix, as `invocache show` and `rm` take one (`MIN_PREFIX_LENGTH`), so a
 * prefix that finds one entry here names the same one there; any other
 * query is text, matched against the task and the start of the prompt.
 */
export function searchEntries(snap: CatalogSnapshot, query: OverviewQuery): EntrySummary[] {
  const q = query.q.toLowerCase();
  if (q === "" && query.role === "" && query.model === "" && query.namespace === "")
    return snap.entries;
  let candidates: readonly EntrySummary[] = snap.entries;
  if (q !== "") {
    // 8+ hex digits is an id prefix (the CLI's length); shorter is text ("beef", "2026").
    const idOnly = q.length >= MIN_PREFIX_LENGTH && /^[0-9a-f]{1,64}$/.test(q);
    const hits = new Set<number>(idOnly ? idPrefixMatches(snap, q) : []);
    if (!idOnly) for (const i of textMatches(snap, q)) hits.add(i);
    candidates = [...hits].sort((a, b) => a - b).map((i) => snap.entries[i]!);
  }
  return candidates.filter(
    (e) =>
      (query.role === "" || e.role === query.role) &&
      (query.model === "" || e.model === query.model) &&
      (query.namespace === "" || e.namespace === query.namespace),
  );
}

/** The overview's totals: the cards, the namespace table, the recent runs and what they spent. */
export interface Facets {
  entries: number;
  namespaces: Array<{ name: string; entries: number; ms: number; bytes: number }>;
  roles: string[];
  models: string[];
  totalMs: number;
  /** What every recording cost (what replaying all of them saves each time). */
  recorded: Recorded;
  /** Every stored run, newest first. */
  runs: readonly RunRecord[];
  /** Per stored run (by key): what its recorded calls spent and its replayed calls saved. */
  runSpend: Map<string, ReturnType<typeof runSpend>>;
  spent: Recorded;
  saved: Recorded;
}

/** What the overview shows: from a snapshot, or from a store's stored metadata (meta-catalog.ts). */
export interface OverviewData {
  /** Undefined while a big store's totals are still being counted. */
  facets: Facets | undefined;
  problems: ReadonlyArray<{ key: string; message: string }>;
  /** The entries matching the search. */
  matched: {
    /** This page's (or, in an export, the first `exportLimit`). */
    rows: readonly EntrySummary[];
    /** How many match, when known. */
    total: number | undefined;
    /** More match after these rows. */
    more: boolean;
  };
  /** The list and its search come from stored metadata (the search covers what it holds). */
  fromMetadata: boolean;
  /** Why every value is read to list this store (no stored metadata), with how to fix it. */
  fullReadReason?: string | undefined;
}

// Facets cost one pass over every entry: keep the last one per snapshot.
const facetCache = new WeakMap<CatalogSnapshot, Facets>();

function facets(snap: CatalogSnapshot): Facets {
  const cached = facetCache.get(snap);
  if (cached !== undefined) return cached;
  const ns = new Map<string, { name: string; entries: number; ms: number; bytes: number }>();
  const roles = new Set<string>();
  const models = new Set<string>();
  let totalMs = 0;
  for (const e of snap.entries) {
    let n = ns.get(e.namespace);
    if (n === undefined) {
      n = { name: e.namespace, entries: 0, ms: 0, bytes: 0 };
      ns.set(e.namespace, n);
    }
    n.entries++;
    n.ms += e.durationMs;
    n.bytes += e.bytes;
    totalMs += e.durationMs;
    roles.add(e.role);
    if (e.model !== "") models.add(e.model);
  }
  const runs = new Map<string, ReturnType<typeof runSpend>>();
  const spentAll: EntrySummary[] = [];
  const savedAll: EntrySummary[] = [];
  for (const r of snap.runs) {
    const entryOf = (c: { id: string; occurrence: number }) =>
      snap.byKey.get(`${r.namespace}:e:${c.id}:${c.occurrence}`);
    runs.set(r.key, runSpend(r, entryOf));
    for (const c of r.calls) {
      const e = entryOf(c);
      if (e === undefined) continue;
      if (c.served === "hit") savedAll.push(e);
      else if (c.served === "recorded") spentAll.push(e);
    }
  }
  const out: Facets = {
    entries: snap.entries.length,
    recorded: spendOf(snap.entries),
    runs: snap.runs,
    runSpend: runs,
    spent: spendOf(spentAll),
    saved: spendOf(savedAll),
    namespaces: [...ns.values()].sort((a, b) => a.name.localeCompare(b.name)),
    roles: [...roles].sort().slice(0, 500),
    models: [...models].sort().slice(0, 500),
    totalMs,
  };
  facetCache.set(snap, out);
  return out;
}

/**
 * The overview of a snapshot (every value read): the slow path for a store
 * without stored metadata, cassettes, and the export.
 */
export function snapshotOverview(
  snap: CatalogSnapshot,
  query: OverviewQuery,
  exportLimit?: number,
  fullReadReason?: string,
): OverviewData {
  const matched = searchEntries(snap, query);
  const rows =
    exportLimit === undefined
      ? matched.slice(query.offset, query.offset + PAGE_SIZE)
      : matched.slice(0, exportLimit);
  return {
    facets: facets(snap),
    problems: snap.problems,
    matched: {
      rows,
      total: matched.length,
      more: (exportLimit === undefined ? query.offset : 0) + rows.length < matched.length,
    },
    fromMetadata: false,
    fullReadReason,
  };
}

/** The rows of an entry table (shared with the cassette view). */
export function entryTable(links: Links, rows: readonly EntrySummary[], id = "entries"): SafeHtml {
  if (rows.length === 0) return html`<div class="empty">No entries match.</div>`;
  return html`<table id="${id}"><thead><tr><th>id</th><th>role</th><th>model or tool</th><th class="num">attempt</th><th class="num">occ</th><th>verdict</th><th>recorded</th><th class="num">took</th></tr></thead><tbody>${rows.map(
    (e) => {
      const href = links.to(paths.entry(e.key, e.file));
      return html`<tr data-href="${href}"><td><a class="id" href="${href}">${short(e.id)}</a></td><td>${e.role}</td><td>${e.tool !== undefined ? html`<span class="badge tool">⚙ ${e.tool}</span>` : e.model || "–"}</td><td class="num">${e.attempt}</td><td class="num">${e.occurrence}</td><td>${verdictBadge(e.verdict)}</td><td>${when(e.recordedAt)}</td><td class="num">${formatMs(e.durationMs)}</td></tr>`;
    },
  )}</tbody></table>`;
}

export function overviewView(
  links: Links,
  data: OverviewData,
  query: OverviewQuery,
  exportLimit?: number,
): SafeHtml {
  const f = data.facets;
  const { rows, total, more } = data.matched;
  const count = (n: number | undefined) => (n === undefined ? "…" : n.toLocaleString("en"));
  const qs = (offset: number) => {
    const p = new URLSearchParams();
    if (query.q) p.set("q", query.q);
    if (query.role) p.set("role", query.role);
    if (query.model) p.set("model", query.model);
    if (query.namespace) p.set("ns", query.namespace);
    if (offset > 0) p.set("offset", String(offset));
    return links.to(paths.overview(p.toString()));
  };
  const option = (value: string, selected: string, label = value) =>
    html`<option value="${value}"${selected === value ? html` selected` : ""}>${label}</option>`;
  const search =
    links.mode === "server"
      ? html`<form class="search" method="get" action="/" role="search">
<input type="search" name="q" value="${query.q}" placeholder="id prefix (8+ hex, as invocache show takes it), or text in a prompt or task" aria-label="Search">
<select name="ns" aria-label="Namespace">${option("", query.namespace, "all namespaces")}${(f?.namespaces ?? []).map((n) => option(n.name, query.namespace))}</select>
<select name="role" aria-label="Role">${option("", query.role, "all roles")}${(f?.roles ?? []).map((r) => option(r, query.role))}</select>
<select name="model" aria-label="Model">${option("", query.model, "all models")}${(f?.models ?? []).map((m) => option(m, query.model))}</select>
<button type="submit">Search</button></form>`
      : html`<form class="search" role="search"><input type="search" data-filter="entries" placeholder="filter the entries below" aria-label="Filter"></form>`;
  const runs = (f?.runs ?? []).slice(0, 20);
  return html`<h1>Overview</h1>
<p class="sub">What is recorded, newest first. Click a run to see its trajectory, an entry to see its prompt and response.</p>
<div class="cards">
<div class="card"><div class="n">${count(f?.entries)}</div><div class="l">entries</div></div>
<div class="card"><div class="n">${count(f?.runs.length)}</div><div class="l">stored runs</div></div>
<div class="card"><div class="n">${count(f?.namespaces.length)}</div><div class="l">namespaces</div></div>
<div class="card"><div class="n">${f === undefined ? "…" : formatMs(f.totalMs)}</div><div class="l">recorded model time</div></div>
<div class="card" id="recorded-tokens"><div class="n">${f === undefined ? "…" : formatTokens(f.recorded.inputTokens + f.recorded.outputTokens)}</div><div class="l">recorded tokens</div></div>
<div class="card" id="recorded-cost"><div class="n">${f === undefined ? "…" : dollars(f.recorded)}</div><div class="l">recorded cost, saved by each full replay</div></div>
</div>
${f === undefined ? html`<p class="legend" id="counting">Still counting the totals from the stored metadata (a large store takes a few seconds): reload for them. The entries below are already current.</p>` : html`<p class="legend" id="spend">Stored runs spent ${spendText(f.spent)} on recorded calls and saved ${spendText(f.saved)} on replayed ones, priced as <code>invocache stats</code> prices them.</p>`}
${data.fullReadReason === undefined ? "" : html`<div class="panel" id="full-read"><span class="badge miss">⚠ slow to open</span> ${data.fullReadReason}</div>`}
${data.problems.length > 0 ? html`<div class="panel"><span class="badge miss">⚠ ${plural(data.problems.length, "unreadable item")}</span> first: <code>${oneLine(data.problems[0]!.message, 200)}</code></div>` : ""}
<h2>Recent runs</h2>
${
  f === undefined
    ? html`<div class="empty">Counting…</div>`
    : runs.length === 0
      ? html`<div class="empty">No stored runs. Runs are stored when a pipeline calls <code>recorder.run(fn, { runId })</code>.</div>`
      : html`<table id="runs"><thead><tr><th>run</th><th>namespace</th><th class="num">calls</th><th>hit / miss</th><th>verdicts</th><th class="num">spent</th><th class="num">saved</th><th>run hash</th><th>ended</th></tr></thead><tbody>${runs.map(
          (r) => {
            const href = links.to(paths.run(r.namespace, r.runId));
            const rejected = r.verdicts.filter((v) => v.verdict === "rejected").length;
            const accepted = r.verdicts.filter((v) => v.verdict === "accepted").length;
            const hits = r.calls.filter((c) => c.served === "hit").length;
            const misses = r.calls.filter((c) => c.served === "recorded").length;
            const known = r.calls.some((c) => c.served !== undefined);
            return html`<tr data-href="${href}"><td><a href="${href}">${r.runId}</a></td><td>${r.namespace}</td><td class="num">${r.calls.length}</td><td>${known ? html`${hits > 0 ? html`<span class="badge hit">● ${hits} hit${hits === 1 ? "" : "s"}</span> ` : ""}${misses > 0 ? html`<span class="badge miss">○ ${misses} miss${misses === 1 ? "" : "es"}</span>` : ""}` : html`<span class="legend">not stored</span>`}</td><td>${accepted > 0 ? html`<span class="badge accepted">✓ ${accepted}</span> ` : ""}${rejected > 0 ? html`<span class="badge rejected">✗ ${rejected}</span>` : ""}</td><td class="num">${spendText(f!.runSpend.get(r.key)!.spent)}</td><td class="num">${spendText(f!.runSpend.get(r.key)!.saved)}</td><td><span class="hash">${short(r.contentHash)}</span></td><td>${when(r.endedAt)}</td></tr>`;
          },
        )}</tbody></table>`
}
<h2>Namespaces</h2>
<table id="namespaces"><thead><tr><th>namespace</th><th class="num">entries</th><th class="num">recorded model time</th><th class="num">size</th></tr></thead><tbody>${(
    f?.namespaces ?? []
  ).map((n) => {
    const href =
      links.mode === "server" ? links.to(paths.overview(`ns=${enc(n.name)}`)) : undefined;
    return html`<tr><td>${href === undefined ? n.name : html`<a href="${href}">${n.name}</a>`}</td><td class="num">${n.entries.toLocaleString("en")}</td><td class="num">${formatMs(n.ms)}</td><td class="num">${formatBytes(n.bytes)}</td></tr>`;
  })}</tbody></table>
<h2>Entries</h2>
${search}
${data.fromMetadata && query.q !== "" ? html`<p class="legend" id="search-covers">Search looks at the stored metadata: an id prefix (8+ hex digits), or text in the task, role, model or tool name (not the prompt).</p>` : ""}
${exportLimit === undefined ? pager(query.offset, rows.length, total, qs, PAGE_SIZE, more) : more ? html`<p class="legend">The newest ${rows.length.toLocaleString("en")} of ${count(total)} entries.</p>` : ""}
${entryTable(links, rows)}
${exportLimit === undefined ? pager(query.offset, rows.length, total, qs, PAGE_SIZE, more) : ""}`;
}

/** The dollars of recordings: "$0.0123", or "price unknown" / "no usage reported" when that is all there is. */
function dollars(r: Recorded): string {
  if (r.usd === 0 && r.unpriced > 0) return "price unknown";
  if (r.inputTokens + r.outputTokens === 0) return r.noUsage > 0 ? "no usage reported" : "$0";
  return `${formatUsd(r.usd)}${r.unpriced > 0 ? ` + ${r.unpriced} unpriced` : ""}`;
}
