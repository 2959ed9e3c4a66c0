/**
 * Entry: one recording. Manifest fields, the normalized prompt with its
 * templated tokens highlighted (and the rule behind each), the conversation
 * as chat turns, the response the same way, the verdict, the provenance
 * stamps that reference it, and the CLI commands for it. A tool call's
 * entry shows the tool, its arguments and its result instead of a prompt.
 * Secrets are shown exactly as stored: `{secret:NAME}`.
 */

import { asModelManifest, callKindNamed } from "../../identity/internal.js";
import type { Entry } from "../../store/index.js";
import { type CatalogSnapshot, type RunRecord, toolLabel, toolOf } from "../catalog.js";
import { cliCommand } from "../commands.js";
import { html, type SafeHtml } from "../escape.js";
import { lineageOf, retriesOf } from "../lineage.js";
import { type Links, paths } from "../links.js";
import { entriesWithId, runsServing } from "../snapshot-index.js";
import { spendOf } from "../spend.js";
import type { StampRef } from "../stamps.js";
import { formatMs, short, spendText, verdictBadge, when } from "./common.js";
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
  source: { flag: string; stamps?: readonly StampRef[]; stampRoot?: string | undefined },
): SafeHtml {
  const { manifest: m, meta } = entry;
  const namespace = key.split(":")[0] ?? "";
  const siblings = entriesWithId(snap, entry.id).filter(
    (e) => e.key !== key && e.namespace === namespace,
  );
  const self = snap.byKey.get(key);
  const lineage = self === undefined ? undefined : lineageOf(snap, self);
  const parent = lineage?.parent;
  const children = self === undefined ? [] : retriesOf(snap, self);
  // The run that recorded it first (the crumb goes there), then the runs that replayed it.
  const runs = [...runsServing(snap, namespace, entry.id, meta.occurrence)].sort(
    (a, b) => Number(recordedIn(b, entry.id)) - Number(recordedIn(a, entry.id)),
  );
  const tool = toolOf(m);
  const model = asModelManifest(m);
  const prompt = model?.prompt ?? "";
  const turns = tool === undefined ? requestTurns(prompt) : undefined;
  const legend = tokenLegend(
    `${m.task} ${tool === undefined ? prompt : JSON.stringify(tool.args)}`,
  );
  const promptBlock =
    prompt.length <= PREVIEW
      ? html`<pre class="code">${highlightTokens(prompt)}</pre>`
      : html`<pre class="code">${highlightTokens(prompt.slice(0, PREVIEW))}…</pre><details class="fold"><summary>Show the whole prompt (${prompt.length.toLocaleString("en")} characters)</summary><pre class="code">${highlightTokens(prompt)}</pre></details>`;
  const stamps = source.stamps ?? [];
  const s = short(entry.id);
  const flag = source.flag === "" ? "" : ` ${source.flag}`;
  return html`<div class="crumbs"><a href="${links.to(paths.overview())}">Overview</a>${runs[0] ? html` › <a href="${links.to(paths.run(runs[0].namespace, runs[0].runId))}">run ${runs[0].runId}</a>` : ""} › entry</div>
<h1>${tool === undefined ? m.role : html`<span class="tool-name">⚙ ${toolLabel(tool)}</span>`} <span class="id">${s}</span> ${meta.verdict ? verdictBadge(meta.verdict.verdict) : ""}</h1>
<p class="sub">${tool === undefined ? "" : html`tool call (${tool.method}) by ${m.role} · `}attempt ${m.attempt} · occurrence ${meta.occurrence} · ${tool === undefined ? model?.model || "no model" : tool.server === "" ? "function tool" : `MCP server ${tool.server}`} · recorded ${when(meta.recordedAt)} · took ${formatMs(meta.durationMs)}</p>
${meta.verdict ? html`<div class="panel"><strong>${meta.verdict.verdict === "accepted" ? "✓ Accepted" : "✗ Rejected"}</strong> by the gate at ${when(meta.verdict.at)}${meta.verdict.reason ? html`: ${meta.verdict.reason}` : ""}</div>` : ""}
<h2>Manifest</h2>
<div class="panel"><dl class="kv">
<dt>identity</dt><dd class="id">${entry.id}</dd>
${tool === undefined ? "" : html`<dt>kind</dt><dd>tool</dd><dt>tool</dt><dd><code>${tool.name}</code></dd><dt>server</dt><dd>${tool.server || "– (a function tool)"}</dd><dt>method</dt><dd><code>${tool.method}</code></dd>`}
<dt>role</dt><dd>${m.role}</dd>
${tool === undefined ? html`<dt>model</dt><dd>${model?.model || "–"}</dd>` : ""}
<dt>task</dt><dd>${highlightTokens(m.task || "–")}</dd>
<dt>attempt</dt><dd>${m.attempt}</dd>
<dt>inputs</dt><dd>${m.inputs.length === 0 ? "none" : html`${m.inputs.map((i) => html`<div class="id">${i}</div>`)}`}</dd>
${tool === undefined ? html`<dt>params</dt><dd><code>${JSON.stringify(model?.params ?? {})}</code></dd>` : ""}
${self !== undefined && callKindNamed(self.kind).priced ? html`<dt>cost</dt><dd id="entry-cost">${spendText(spendOf([self]))}${self.usage === undefined ? "" : ` (${self.usage.inputTokens.toLocaleString("en")} in, ${self.usage.outputTokens.toLocaleString("en")} out)`} <span class="legend">when recorded; each replay saves it</span></dd>` : ""}
<dt>store key</dt><dd class="id">${key}</dd>
<dt>normalization</dt><dd>v${meta.normalization} · written by invocache ${meta.invocacheVersion}</dd>
${parent ? html`<dt>retry of</dt><dd><a class="id" href="${links.to(paths.entry(parent.key, parent.file))}">${short(parent.id)}</a> (attempt ${parent.attempt}${parent.verdict ? `, ${parent.verdict}` : ""}) · <a href="${links.to(paths.diff(parent.key, key))}">diff with it</a>${lineage?.inferred ? html` <span class="guess" title="an older recording: its meta.parent names an identity that was never called, so the viewer matched role, task and attempt">(inferred)</span>` : ""}</dd>` : ""}
${children.map((c) => html`<dt>retried as</dt><dd><a class="id" href="${links.to(paths.entry(c.key, c.file))}">${short(c.id)}</a> (attempt ${c.attempt}${c.verdict ? `, ${c.verdict}` : ""}) · <a href="${links.to(paths.diff(key, c.key))}">diff with the retry</a></dd>`)}
${siblings.map((c) => html`<dt>occurrence ${c.occurrence}</dt><dd><a href="${links.to(paths.entry(c.key, c.file))}">same identity</a></dd>`)}
${runs.map((r) => html`<dt>in run</dt><dd><a href="${links.to(paths.run(r.namespace, r.runId))}">${r.runId}</a>${recordedIn(r, entry.id) ? " (recorded)" : r.calls.some((c) => c.id === entry.id && c.served === "hit") ? " (replayed)" : ""}</dd>`)}
</dl></div>
${
  tool === undefined
    ? html`<h2>Normalized prompt</h2>
${legend.length > 0 ? html`<p class="legend">Templated tokens: ${legend.map((t) => html`<mark class="tok" title="${t.rules}">${t.token}</mark> ×${t.count} <span>(rule ${t.rules})</span> `)}</p>` : html`<p class="legend">No templated tokens: no normalization rule replaced anything here.</p>`}
${promptBlock}
${turns ? html`<h2>Conversation</h2>${renderTurns(turns, true)}` : ""}
<h2>Response</h2>
${renderResponse(entry.response)}`
    : html`<h2>Arguments</h2>
<p class="legend">As hashed: string values normalized${legend.length > 0 ? html`; templated tokens: ${legend.map((t) => html`<mark class="tok" title="${t.rules}">${t.token}</mark> ×${t.count} `)}` : ""}.</p>
<pre class="code">${highlightTokens(JSON.stringify(tool.args, null, 2))}</pre>
<h2>Result</h2>
<pre class="code">${JSON.stringify(entry.response, null, 2)}</pre>`
}
<h2>Stamps</h2>
${
  stamps.length === 0
    ? html`<div class="empty">No provenance stamp${source.stampRoot ? html` under <code>${source.stampRoot}</code>` : ""} references this entry${tool === undefined ? "" : " (tool calls write no artifact)"}.</div>`
    : html`<table id="stamps"><thead><tr><th>artifact</th><th class="num">line</th><th>written by</th><th>signature</th><th>artifact matches</th></tr></thead><tbody>${stamps.map(
        (r) =>
          html`<tr><td><code>${r.artifact}</code></td><td class="num">${r.line}</td><td>${r.replayed ? "a replayed call" : "the recorded call"}</td><td>${r.signed ? html`signed, keyid <span class="id">${r.keyids.map((k) => k.slice(0, 12)).join(", ") || "–"}</span>` : "unsigned"}</td><td>${r.ok ? html`<span class="same">✓ yes</span>` : html`<span class="differs">✗ ${r.problems[0] ?? "no"}</span>`}</td></tr>`,
      )}</tbody></table><p class="legend">Found under <code>${source.stampRoot ?? ""}</code>. Signatures are not checked here: <code>npx invocache verify &lt;artifact&gt; --trust &lt;key.pub.pem&gt;</code> checks them against a key you trust.</p>`
}
<h2>Commands</h2>
<div class="panel cmds"><pre class="code">${cliCommand(["show", s], flag)}</pre>
<pre class="code">${parent ? cliCommand(["explain", short(parent.id), s], flag) : `${cliCommand(["explain", s])} <other-id>${flag}`}</pre>
<pre class="code">${cliCommand(["prune", "--older-than", "30d"], flag)}</pre></div>`;
}

function recordedIn(run: RunRecord, id: string): boolean {
  return run.calls.some((c) => c.id === id && c.served === "recorded");
}
