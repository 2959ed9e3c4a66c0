/**
 * Diff: two entries side by side. The field list is `explainIdentity`, the
 * same function `invocache explain` and miss reports print, for model and
 * tool calls alike (one implementation, two renderings); its `[-removed-]{+added+}` hunks become
 * <del>/<ins>. Below it, full word diffs of the prompts and the responses,
 * from the same `diff` library explain uses.
 */
import { diffWordsWithSpace } from "diff";
import { explainIdentity, type FieldDiff } from "../../identity/index.js";
import { asModelManifest } from "../../identity/internal.js";
import type { Entry } from "../../store/index.js";
import { toolLabel, toolOf } from "../catalog.js";
import { html, type SafeHtml } from "../escape.js";
import { type Links, paths } from "../links.js";
import { short, verdictBadge, when } from "./common.js";
import { highlightTokens, requestTurns, responseText, type Turn } from "./conversation.js";

/** Render explain's `[-x-]{+y+}` marks as <del>/<ins>, everything else as text. */
export function renderMarks(text: string): SafeHtml {
  const out: SafeHtml[] = [];
  const re = /\[-([\s\S]*?)-\]|\{\+([\s\S]*?)\+\}/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    const at = m.index ?? 0;
    out.push(html`${text.slice(last, at)}`);
    out.push(m[1] !== undefined ? html`<del>${m[1]}</del>` : html`<ins>${m[2] ?? ""}</ins>`);
    last = at + m[0].length;
  }
  out.push(html`${text.slice(last)}`);
  return html`${out}`;
}

/** The explain field list, rendered. */
export function fieldList(
  diffs: ReadonlyArray<Pick<FieldDiff, "summary" | "diff" | "paths"> & { field: string }>,
): SafeHtml {
  if (diffs.length === 0)
    return html`<div class="panel"><span class="same">= Same identity</span>: every manifest field is equal.</div>`;
  return html`<ul class="fields">${diffs.map(
    (d) =>
      html`<li><span class="f">≠ ${d.field}</span>${d.summary}${d.diff ? html`<pre class="code hunk">${renderMarks(d.diff)}</pre>` : ""}${d.paths && d.paths.length > 8 ? html`<details class="fold"><summary>all ${d.paths.length} paths</summary><pre>${d.paths.join("\n")}</pre></details>` : ""}</li>`,
  )}</ul>`;
}

// Beyond this many word edits, show the texts whole instead of a word diff (O(N·D)).
const MAX_EDIT = 2000;

/** Both sides of a word diff: removals marked on the left, additions on the right. */
function sideBySide(a: string, b: string, tokens: boolean): [SafeHtml, SafeHtml] {
  const render = (s: string) => (tokens ? highlightTokens(s) : html`${s}`);
  if (a === b) return [render(a), render(b)];
  const changes = diffWordsWithSpace(a, b, { maxEditLength: MAX_EDIT });
  if (changes === undefined) return [render(a), render(b)];
  const left: SafeHtml[] = [];
  const right: SafeHtml[] = [];
  for (const c of changes) {
    if (c.added) right.push(html`<ins>${c.value}</ins>`);
    else if (c.removed) left.push(html`<del>${c.value}</del>`);
    else {
      left.push(render(c.value));
      right.push(render(c.value));
    }
  }
  return [html`${left}`, html`${right}`];
}

/**
 * The field list of two manifests of any kind: `explainIdentity`, what
 * `invocache explain` and miss reports print (a tool call's differing
 * argument paths, a model call's fields, every differing path across kinds).
 */
export function manifestDiffs(a: Entry["manifest"], b: Entry["manifest"]): FieldDiff[] {
  return explainIdentity(a, b);
}

/** A turn's text and its extras (tool calls, ids), as one comparable text. */
function turnText(t: Turn | undefined): string {
  if (t === undefined) return "";
  return [t.text, ...t.extra.map((x) => `${x.label}: ${x.body}`)].join("\n");
}

/**
 * Two conversations message by message (the n-th turn of A beside the n-th
 * of B, each a word diff of its text), instead of a diff of their escaped
 * JSON; turns alike are folded. Undefined when either prompt is not a
 * conversation (requestTurns).
 */
function turnDiff(a: string, b: string): SafeHtml | undefined {
  const ta = requestTurns(a);
  const tb = requestTurns(b);
  if (ta === undefined || tb === undefined) return undefined;
  const rows: SafeHtml[] = [];
  for (let i = 0; i < Math.max(ta.length, tb.length); i++) {
    const x = ta[i];
    const y = tb[i];
    const [l, r] = sideBySide(turnText(x), turnText(y), true);
    const same =
      x !== undefined && y !== undefined && x.who === y.who && turnText(x) === turnText(y);
    const who = x?.who === y?.who ? (x?.who ?? "") : `${x?.who ?? "–"} → ${y?.who ?? "–"}`;
    const grid = html`<div class="diff-grid"><div><pre class="code">${x === undefined ? "(no such message)" : l}</pre></div><div><pre class="code">${y === undefined ? "(no such message)" : r}</pre></div></div>`;
    rows.push(
      same
        ? html`<details class="turn-diff same"><summary>message ${i + 1} · ${who} · the same</summary>${grid}</details>`
        : html`<div class="turn-diff differs"><h3>message ${i + 1} · ${who} · differs</h3>${grid}</div>`,
    );
  }
  return html`<div id="turns">${rows}</div>`;
}

/** What is compared as "the prompt": a model call's prompt, a tool call's arguments. */
function promptOf(e: Entry): string {
  const t = toolOf(e.manifest);
  return t === undefined
    ? (asModelManifest(e.manifest)?.prompt ?? "")
    : JSON.stringify(t.args, null, 2);
}

export function diffView(
  links: Links,
  a: { key: string; entry: Entry },
  b: { key: string; entry: Entry },
): SafeHtml {
  const tools = toolOf(a.entry.manifest) !== undefined || toolOf(b.entry.manifest) !== undefined;
  const diffs = manifestDiffs(a.entry.manifest, b.entry.manifest);
  const [pa, pb] = sideBySide(promptOf(a.entry), promptOf(b.entry), true);
  const turns = tools ? undefined : turnDiff(promptOf(a.entry), promptOf(b.entry));
  const ra = responseText(a.entry.response);
  const rb = responseText(b.entry.response);
  const [xa, xb] = sideBySide(ra, rb, false);
  const head = (side: { key: string; entry: Entry }, label: string) => {
    const e = side.entry;
    return html`<div class="panel"><h3>${label}</h3><div><strong>${toolOf(e.manifest) === undefined ? e.manifest.role : `⚙ ${toolLabel(toolOf(e.manifest)!)}`}</strong> <a class="id" href="${links.to(paths.entry(side.key))}">${short(e.id)}</a> ${e.meta.verdict ? verdictBadge(e.meta.verdict.verdict) : ""}</div><div class="legend">attempt ${e.manifest.attempt} · occurrence ${e.meta.occurrence} · recorded ${when(e.meta.recordedAt)}</div>${e.meta.verdict?.reason ? html`<div>${e.meta.verdict.reason}</div>` : ""}</div>`;
  };
  return html`<div class="crumbs"><a href="${links.to(paths.overview())}">Overview</a> › diff</div>
<h1>Diff <span class="id">${short(a.entry.id)}</span> → <span class="id">${short(b.entry.id)}</span></h1>
<p class="sub">Why these two recordings have ${diffs.length === 0 ? "the same identity" : "different identities"}, field by field, as <code>invocache explain ${short(a.entry.id)} ${short(b.entry.id)}</code> prints it.</p>
<div class="diff-grid">${head(a, "A")}${head(b, "B")}</div>
<h2>Fields that differ</h2>
${fieldList(diffs)}
<p class="legend"><del>struck through</del> only in A · <ins>underlined</ins> only in B</p>
<h2>${tools ? "Arguments" : "Prompt"}</h2>
${turns ?? html`<div class="diff-grid"><div><pre class="code">${pa}</pre></div><div><pre class="code">${pb}</pre></div></div>`}
<h2>Response</h2>
<div class="diff-grid"><div><pre class="code">${xa}</pre></div><div><pre class="code">${xb}</pre></div></div>`;
}
