/**
 * Entry: one recording. Manifest fields, the normalized prompt with its
 * templated tokens highlighted (and the rule behind each), the conversation
 * as chat turns, the response the same way, the verdict, and the CLI
 * commands for it. Secrets are shown exactly as stored: `{secret:NAME}`.
 */

import type { Entry } from "../../store/index.js";
import type { CatalogSnapshot } from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import { retriesOf, retryOf } from "../lineage.js";
import { type Links, paths } from "../links.js";
import { entriesWithId, runsServing } from "../snapshot-index.js";
import { formatMs, short, verdictBadge, when } from "./common.js";
import {
  highlightTokens,
  renderResponse,
  renderTurns,
  requestTurns,
  tokenLegend,
} from "./conversation.js";

const PREVIEW = 700;

export function entryView(
  links: Links,
  snap: CatalogSnapshot,
  key: string,
  entry: Entry,
  source: { flag: string },
): SafeHtml {
  const { manifest: m, meta } = entry;
  const namespace = key.split(":")[0] ?? "";
  const siblings = entriesWithId(snap, entry.id).filter(
    (e) => e.key !== key && e.namespace === namespace,
  );
  const self = snap.byKey.get(key);
  const parent = self === undefined ? undefined : retryOf(snap, self);
  const children = self === undefined ? [] : retriesOf(snap, self);
  const runs = runsServing(snap, namespace, entry.id, meta.occurrence);
  const turns = requestTurns(m.prompt);
  const legend = tokenLegend(`${m.task} ${m.prompt}`);
  const promptBlock =
    m.prompt.length <= PREVIEW
      ? html`<pre class="code">${highlightTokens(m.prompt)}</pre>`
      : html`<pre class="code">${highlightTokens(m.prompt.slice(0, PREVIEW))}…</pre><details class="fold"><summary>Show the whole prompt (${m.prompt.length.toLocaleString("en")} characters)</summary><pre class="code">${highlightTokens(m.prompt)}</pre></details>`;
  const s = short(entry.id);
  const flag = source.flag === "" ? "" : ` ${source.flag}`;
  return html`<div class="crumbs"><a href="${links.to(paths.overview())}">Overview</a>${runs[0] ? html` › <a href="${links.to(paths.run(runs[0].namespace, runs[0].runId))}">run ${runs[0].runId}</a>` : ""} › entry</div>
<h1>${m.role} <span class="id">${s}</span> ${meta.verdict ? verdictBadge(meta.verdict.verdict) : ""}</h1>
<p class="sub">attempt ${m.attempt} · occurrence ${meta.occurrence} · ${m.model || "no model"} · recorded ${when(meta.recordedAt)} · took ${formatMs(meta.durationMs)}</p>
${meta.verdict ? html`<div class="panel"><strong>${meta.verdict.verdict === "accepted" ? "✓ Accepted" : "✗ Rejected"}</strong> by the gate at ${when(meta.verdict.at)}${meta.verdict.reason ? html`: ${meta.verdict.reason}` : ""}</div>` : ""}
<h2>Manifest</h2>
<div class="panel"><dl class="kv">
<dt>identity</dt><dd class="id">${entry.id}</dd>
<dt>role</dt><dd>${m.role}</dd>
<dt>model</dt><dd>${m.model || "–"}</dd>
<dt>task</dt><dd>${highlightTokens(m.task || "–")}</dd>
<dt>attempt</dt><dd>${m.attempt}</dd>
<dt>inputs</dt><dd>${m.inputs.length === 0 ? "none" : html`${m.inputs.map((i) => html`<div class="id">${i}</div>`)}`}</dd>
<dt>params</dt><dd><code>${JSON.stringify(m.params ?? {})}</code></dd>
<dt>store key</dt><dd class="id">${key}</dd>
<dt>normalization</dt><dd>v${meta.normalization} · written by invocache ${meta.invocacheVersion}</dd>
${parent ? html`<dt>retry of</dt><dd><a class="id" href="${links.to(paths.entry(parent.key, parent.file))}">${short(parent.id)}</a> (attempt ${parent.attempt}${parent.verdict ? `, ${parent.verdict}` : ""}) · <a href="${links.to(paths.diff(parent.key, key))}">diff with it</a></dd>` : ""}
${children.map((c) => html`<dt>retried as</dt><dd><a class="id" href="${links.to(paths.entry(c.key, c.file))}">${short(c.id)}</a> (attempt ${c.attempt}${c.verdict ? `, ${c.verdict}` : ""}) · <a href="${links.to(paths.diff(key, c.key))}">diff with the retry</a></dd>`)}
${siblings.map((c) => html`<dt>occurrence ${c.occurrence}</dt><dd><a href="${links.to(paths.entry(c.key, c.file))}">same identity</a></dd>`)}
${runs.map((r) => html`<dt>in run</dt><dd><a href="${links.to(paths.run(r.namespace, r.runId))}">${r.runId}</a></dd>`)}
</dl></div>
<h2>Normalized prompt</h2>
${legend.length > 0 ? html`<p class="legend">Templated tokens: ${legend.map((t) => html`<mark class="tok" title="${t.rules}">${t.token}</mark> ×${t.count} <span>(rule ${t.rules})</span> `)}</p>` : html`<p class="legend">No templated tokens: no normalization rule replaced anything here.</p>`}
${promptBlock}
${turns ? html`<h2>Conversation</h2>${renderTurns(turns, true)}` : ""}
<h2>Response</h2>
${renderResponse(entry.response)}
<h2>Commands</h2>
<div class="panel cmds"><pre class="code">npx invocache show ${s}${flag}</pre>
${parent ? html`<pre class="code">npx invocache explain ${short(parent.id)} ${s}${flag}</pre>` : html`<pre class="code">npx invocache explain ${s} &lt;other-id&gt;${flag}</pre>`}
<pre class="code">npx invocache prune --older-than 30d${flag}</pre>
<p class="legend">Provenance stamps live beside their artifacts: <code>npx invocache verify &lt;artifact&gt;</code> names the identity a stamp references.</p></div>`;
}
