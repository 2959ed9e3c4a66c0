/**
 * Run: a stored run's trajectory as a timeline, each step with its role,
 * kind (model or tool), short id, attempt, occurrence, hit or miss,
 * recorded duration and verdict; retries are
 * linked to the attempt they retry (attempt 0 rejected → attempt 1
 * accepted) with a link to the diff between them. Compare: two runs step by
 * step, the first differing step highlighted.
 */
import type { CatalogSnapshot, EntrySummary, RunRecord } from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import { lineageOf } from "../lineage.js";
import { type Links, paths } from "../links.js";
import type { RunDiff } from "../run-diff.js";
import { runSpend } from "../spend.js";
import { formatMs, oneLine, short, spendText, verdictBadge, when } from "./common.js";

function entryKeyOf(namespace: string, id: string, occurrence: number): string {
  return `${namespace}:e:${id}:${occurrence}`;
}

/** A step of a run with what the catalog knows about it. */
interface Step {
  n: number;
  id: string;
  occurrence: number;
  key: string;
  entry: EntrySummary | undefined;
  verdict: string | undefined;
  /** How the run answered it: "hit", "recorded", "live"; undefined in an older run record. */
  served: string | undefined;
}

/** Hit or miss, as an icon, a word and a colour. */
function servedBadge(served: string | undefined): SafeHtml | string {
  if (served === "hit")
    return html`<span class="badge hit" title="replayed from the recording">● hit</span>`;
  if (served === "recorded")
    return html`<span class="badge miss" title="not recorded yet: called upstream and recorded">○ miss · recorded</span>`;
  if (served === "live")
    return html`<span class="badge plain" title="called upstream and not stored">◌ live</span>`;
  return "";
}

function steps(run: RunRecord, snap: CatalogSnapshot): Step[] {
  const verdicts = new Map(run.verdicts.map((v) => [`${v.id}:${v.occurrence}`, v.verdict]));
  return run.calls.map((c, i) => {
    const key = entryKeyOf(run.namespace, c.id, c.occurrence);
    const entry = snap.byKey.get(key);
    return {
      n: i + 1,
      id: c.id,
      occurrence: c.occurrence,
      key,
      entry,
      verdict: verdicts.get(`${c.id}:${c.occurrence}`) ?? entry?.verdict,
      served: c.served,
    };
  });
}

export function findRun(
  snap: CatalogSnapshot,
  namespace: string,
  runId: string,
): RunRecord | undefined {
  return snap.runs.find((r) => r.namespace === namespace && r.runId === runId);
}

export function runView(links: Links, snap: CatalogSnapshot, run: RunRecord): SafeHtml {
  const all = steps(run, snap);
  const byKey = new Map(all.map((s) => [s.key, s]));
  const retried = new Map<Step, Step>();
  const retriedBy = new Map<Step, Step>();
  const guessed = new Set<Step>();
  for (const s of all) {
    const l = s.entry === undefined ? undefined : lineageOf(snap, s.entry);
    const ps = l === undefined ? undefined : byKey.get(l.parent.key);
    if (ps !== undefined && ps.n < s.n) {
      retried.set(s, ps);
      retriedBy.set(ps, s);
      if (l?.inferred) guessed.add(s);
    }
  }
  const hits = all.filter((s) => s.served === "hit").length;
  const misses = all.filter((s) => s.served === "recorded").length;
  const knownServed = all.some((s) => s.served !== undefined);
  const others = snap.runs.filter((r) => r !== run);
  const totalMs = all.reduce((t, s) => t + (s.entry?.durationMs ?? 0), 0);
  const money = runSpend(run, (c) => snap.byKey.get(`${run.namespace}:e:${c.id}:${c.occurrence}`));
  const item = (s: Step): SafeHtml => {
    const e = s.entry;
    const href = links.to(paths.entry(s.key, e?.file));
    const parent = retried.get(s);
    const child = retriedBy.get(s);
    const cls = [
      s.verdict ?? "",
      e === undefined ? "missing" : "",
      e?.tool !== undefined ? "tool" : "",
    ].join(" ");
    const name =
      e === undefined
        ? "(not in this source)"
        : e.tool !== undefined
          ? html`<span class="tool-name">⚙ ${e.tool}</span>`
          : e.role;
    return html`<li class="step ${cls}" id="step-${s.n}"><div class="dot" aria-hidden="true">${s.n}</div><div class="body">
<div class="head"><span class="role">${name}</span><a class="id" href="${href}">${short(s.id)}</a>${servedBadge(s.served)}${s.verdict !== undefined ? verdictBadge(s.verdict) : ""}</div>
<div class="meta"><span>step ${s.n}</span><span>kind ${e?.kind ?? "?"}</span>${e?.tool !== undefined ? html`<span>role ${e.role}</span>` : ""}<span>attempt ${e?.attempt ?? "?"}</span><span>occurrence ${s.occurrence}</span><span>${s.served === "hit" ? "recording took" : "took"} ${e === undefined ? "–" : formatMs(e.durationMs)}</span>${e?.model ? html`<span>model ${e.model}</span>` : ""}</div>
${e?.reason !== undefined ? html`<div class="why">${oneLine(e.reason, 300)}</div>` : ""}
${
  parent !== undefined
    ? html`<div class="lineage">↳ retry of <a href="#step-${parent.n}">step ${parent.n}</a> (attempt ${parent.entry?.attempt ?? "?"}${parent.verdict ? `, ${parent.verdict}` : ""}) · <a href="${links.to(paths.diff(parent.key, s.key))}">diff with it</a>${guessed.has(s) ? html` <span class="guess" title="an older recording: its meta.parent names an identity that was never called, so the viewer matched role, task and attempt">(inferred)</span>` : ""}</div>`
    : ""
}
${
  child !== undefined
    ? html`<div class="lineage">↪ retried as <a href="#step-${child.n}">step ${child.n}</a> (attempt ${child.entry?.attempt ?? "?"}${child.verdict ? `, ${child.verdict}` : ""}) · <a href="${links.to(paths.diff(s.key, child.key))}">diff with the retry</a></div>`
    : ""
}
</div></li>`;
  };
  return html`<div class="crumbs"><a href="${links.to(paths.overview())}">Overview</a> › run</div>
<h1>Run ${run.runId}</h1>
<p class="sub">namespace ${run.namespace} · ${all.length} calls${knownServed ? ` · ${hits} ${hits === 1 ? "hit" : "hits"}, ${misses} ${misses === 1 ? "miss" : "misses"}` : ""} · ${formatMs(totalMs)} recorded model time · ended ${when(run.endedAt)}</p>
<div class="panel"><dl class="kv" id="run-spend"><dt>spent</dt><dd>${spendText(money.spent)} <span class="legend">on the calls this run recorded</span></dd><dt>saved</dt><dd>${spendText(money.saved)} <span class="legend">on the calls it replayed (what their recordings cost)</span></dd></dl></div>
<div class="panel"><dl class="kv"><dt>run hash</dt><dd><span class="hash">${run.contentHash}</span></dd>
<dt>verdicts</dt><dd>${run.verdicts.length === 0 ? "none" : run.verdicts.map((v) => html`${verdictBadge(v.verdict)} `)}</dd></dl>
<p class="legend">The run hash is a Merkle root over the identities served, in order: two runs with the same hash took the same trajectory. ● hit: replayed from the recording; ○ miss: called upstream and recorded${knownServed ? "" : " (this run record is older than per-step hit/miss: not shown)"}. Durations are those of the recorded calls.</p></div>
<h2>Trajectory</h2>
<ol class="timeline">${all.map(item)}</ol>
${
  others.length === 0
    ? ""
    : html`<h2>Compare with another run</h2><div class="panel"><ul class="tree" id="compare-runs">${others
        .slice(0, 50)
        .map(
          (o) =>
            html`<li><a href="${links.to(paths.compare(`${run.namespace}/${run.runId}`, `${o.namespace}/${o.runId}`))}">${o.namespace} / ${o.runId}</a> <span class="hash">${short(o.contentHash)}</span> ${o.contentHash === run.contentHash ? html`<span class="same">= same trajectory</span>` : html`<span class="differs">≠ differs</span>`}</li>`,
        )}</ul></div>`
}`;
}

/** Parse `namespace/runId`. */
export function runRef(ref: string): { namespace: string; runId: string } | undefined {
  const i = ref.indexOf("/");
  if (i <= 0 || i === ref.length - 1) return undefined;
  return { namespace: ref.slice(0, i), runId: ref.slice(i + 1) };
}

export function compareView(
  links: Links,
  snap: CatalogSnapshot,
  a: RunRecord,
  b: RunRecord,
  diff: RunDiff,
): SafeHtml {
  const sa = steps(a, snap);
  const sb = steps(b, snap);
  const n = Math.max(sa.length, sb.length);
  // The divergence is decided by diffRuns, the function `invocache diff` prints.
  const first = diff.divergedAt === null ? -1 : diff.divergedAt - 1;
  const why =
    diff.why.length > 0
      ? html`<ul id="compare-why">${diff.why.map((w) => html`<li><b>${w.field}</b>: ${w.summary}</li>`)}</ul>`
      : diff.note === null
        ? ""
        : html`<p class="reason">${diff.note}</p>`;
  const cell = (s: Step | undefined) =>
    s === undefined
      ? html`<td colspan="3" class="reason">(no step)</td>`
      : html`<td>${s.entry?.tool !== undefined ? `⚙ ${s.entry.tool}` : (s.entry?.role ?? "?")}</td><td><a class="id" href="${links.to(paths.entry(s.key, s.entry?.file))}">${short(s.id)}</a> · ${s.entry?.attempt ?? "?"}</td><td>${servedBadge(s.served)} ${s.verdict !== undefined ? verdictBadge(s.verdict) : ""}</td>`;
  return html`<div class="crumbs"><a href="${links.to(paths.overview())}">Overview</a> › compare runs</div>
<h1>Compare runs</h1>
<p class="sub"><a href="${links.to(paths.run(a.namespace, a.runId))}">${a.namespace} / ${a.runId}</a> <span class="hash">${short(a.contentHash)}</span> vs <a href="${links.to(paths.run(b.namespace, b.runId))}">${b.namespace} / ${b.runId}</a> <span class="hash">${short(b.contentHash)}</span></p>
<div class="panel">${
    first === -1
      ? html`<span class="same">= Same trajectory</span>: every step has the same identity and occurrence.`
      : html`<span class="differs">≠ The runs diverge at step ${first + 1}</span>${sa[first] && sb[first] ? html` · <a href="${links.to(paths.diff(sa[first]!.key, sb[first]!.key))}">diff the two calls</a>` : ""}`
  }${why}</div>
<table id="compare"><thead><tr><th class="num">step</th><th>role</th><th>id · attempt</th><th>verdict</th><th>role</th><th>id · attempt</th><th>verdict</th></tr></thead><tbody>${Array.from(
    { length: n },
    (_, i) =>
      html`<tr class="${i === first ? "first-diff" : ""}"><td class="num">${i === first ? "▶ " : ""}${i + 1}</td>${cell(sa[i])}${cell(sb[i])}</tr>`,
  )}</tbody></table>`;
}
