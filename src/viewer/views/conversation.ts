/**
 * Prompts and responses rendered as chat turns. Understands the shapes the
 * adapters record: OpenAI chat (`messages`, `tool_calls`, `tool` turns),
 * Anthropic messages (`system`, content blocks, `tool_use`/`tool_result`),
 * HTTP recordings (`{status, headers, body}`) and recorded streams
 * (`{kind: "stream", head, events}`, reassembled, events expandable).
 * Anything else is shown as JSON, never dropped.
 */

import type { JsonValue } from "../../json/index.js";
import { NORMALIZATION_RULES } from "../../normalize/index.js";
import { html, type SafeHtml } from "../escape.js";

type Obj = { [key: string]: JsonValue };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** A templated token of a normalized prompt and the rules that produce it. */
const TOKEN = /\{(?:project|home|tmp|uuid|timestamp|secret:[A-Za-z0-9_.-]{1,80})\}/g;

function rulesFor(token: string): string {
  const hits = NORMALIZATION_RULES.filter((r) =>
    token.startsWith("{secret:") ? r.name === "secret" : r.replacement === token,
  );
  return hits.map((r) => `${r.name}: ${r.description}`).join("\n");
}

/**
 * Text with each normalization token (`{project}`, `{timestamp}`,
 * `{secret:NAME}`…) highlighted; its tooltip names the rule behind it.
 */
export function highlightTokens(text: string): SafeHtml {
  const parts: SafeHtml[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    parts.push(html`${text.slice(last, at)}`);
    parts.push(html`<mark class="tok" title="${rulesFor(m[0])}">${m[0]}</mark>`);
    last = at + m[0].length;
  }
  parts.push(html`${text.slice(last)}`);
  return html`${parts}`;
}

/** Which tokens occur, with the rules that make them, for the legend. */
export function tokenLegend(text: string): Array<{ token: string; count: number; rules: string }> {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(TOKEN)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  return [...counts].map(([token, count]) => ({
    token,
    count,
    rules: NORMALIZATION_RULES.filter((r) =>
      token.startsWith("{secret:") ? r.name === "secret" : r.replacement === token,
    )
      .map((r) => r.name)
      .join(", "),
  }));
}

export interface Turn {
  who: string;
  text: string;
  extra: Array<{ label: string; body: string }>;
}

function stringify(v: JsonValue | undefined): string {
  if (v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

/** Text and tool parts of a message's content (string, or a list of blocks). */
function contentTurn(who: string, content: JsonValue | undefined, msg: Obj): Turn {
  const turn: Turn = { who, text: "", extra: [] };
  if (typeof content === "string") turn.text = content;
  else if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const block of content) {
      if (!isObj(block)) continue;
      if (typeof block.text === "string") texts.push(block.text);
      else if (block.type === "tool_use")
        turn.extra.push({
          label: `tool call · ${stringify(block.name)}`,
          body: stringify(block.input),
        });
      else if (block.type === "tool_result")
        turn.extra.push({
          label: `tool result · ${stringify(block.tool_use_id)}`,
          body: stringify(block.content),
        });
      else turn.extra.push({ label: String(block.type ?? "part"), body: stringify(block) });
    }
    turn.text = texts.join("\n\n");
  } else if (content !== undefined && content !== null) turn.text = stringify(content);
  const calls = msg.tool_calls;
  if (Array.isArray(calls)) {
    for (const c of calls) {
      const fn = isObj(c) && isObj(c.function) ? c.function : undefined;
      turn.extra.push({
        label: `tool call · ${stringify(fn?.name)}`,
        body: stringify(fn?.arguments),
      });
    }
  }
  if (who === "tool" && typeof msg.tool_call_id === "string")
    turn.who = `tool · ${msg.tool_call_id}`;
  return turn;
}

/** The turns of a request body (OpenAI or Anthropic), or undefined for anything else. */
export function requestTurns(prompt: string): Turn[] | undefined {
  let body: unknown;
  try {
    body = JSON.parse(prompt);
  } catch {
    return undefined;
  }
  if (!isObj(body) || !Array.isArray(body.messages)) return undefined;
  const turns: Turn[] = [];
  if (body.system !== undefined) turns.push(contentTurn("system", body.system, {}));
  for (const m of body.messages) {
    if (!isObj(m)) continue;
    turns.push(contentTurn(typeof m.role === "string" ? m.role : "message", m.content, m));
  }
  return turns;
}

/** The assistant turns of a response body, or undefined. */
function bodyTurns(body: JsonValue | undefined): Turn[] | undefined {
  if (!isObj(body)) return undefined;
  if (Array.isArray(body.choices)) {
    const out: Turn[] = [];
    for (const c of body.choices) {
      if (isObj(c) && isObj(c.message))
        out.push(
          contentTurn(stringify(c.message.role) || "assistant", c.message.content, c.message),
        );
    }
    return out.length > 0 ? out : undefined;
  }
  if (Array.isArray(body.content) && body.type === "message")
    return [contentTurn("assistant", body.content, body)];
  return undefined;
}

/** Reassemble a recorded stream's text from OpenAI or Anthropic deltas (SSE or JSON events). */
function streamText(events: JsonValue[]): string {
  let text = "";
  for (const ev of events) {
    let data: unknown = isObj(ev) && "data" in ev ? ev.data : ev;
    if (isObj(data) && typeof data.data === "string") data = data.data;
    if (typeof data === "string") {
      try {
        data = JSON.parse(data);
      } catch {
        continue;
      }
    }
    if (!isObj(data)) continue;
    const choices = data.choices;
    if (Array.isArray(choices)) {
      for (const c of choices) {
        if (isObj(c) && isObj(c.delta) && typeof c.delta.content === "string")
          text += c.delta.content;
      }
    }
    if (isObj(data.delta) && typeof data.delta.text === "string") text += data.delta.text;
    if (typeof data.textDelta === "string") text += data.textDelta;
    if (typeof data.delta === "string") text += data.delta;
  }
  return text;
}

export function renderTurns(turns: Turn[], tokens: boolean): SafeHtml {
  return html`<div class="chat">${turns.map((t) => {
    const role = t.who.split(" ")[0]!.toLowerCase();
    const text = tokens ? highlightTokens(t.text) : html`${t.text}`;
    return html`<div class="turn ${role}"><div class="who">${t.who}</div><div class="what">${t.text === "" ? "" : html`<pre>${text}</pre>`}${t.extra.map(
      (x) =>
        html`<details class="fold" open><summary>${x.label}</summary><pre class="code">${x.body}</pre></details>`,
    )}</div></div>`;
  })}</div>`;
}

/** The response, rendered as chat when its shape is known, with the raw JSON expandable. */
export function renderResponse(response: JsonValue): SafeHtml {
  const rawJson = html`<details class="fold"><summary>Raw response (JSON)</summary><pre class="code">${JSON.stringify(response, null, 2)}</pre></details>`;
  if (isObj(response) && response.kind === "stream" && Array.isArray(response.events)) {
    const text = streamText(response.events);
    return html`<p class="legend">A streamed response of ${response.events.length} events, reassembled.</p>
${renderTurns([{ who: "assistant", text, extra: [] }], false)}
<details class="fold"><summary>Events (${response.events.length})</summary><pre class="code">${response.events.map((e) => `${JSON.stringify(e)}\n`).join("")}</pre></details>${rawJson}`;
  }
  const body =
    isObj(response) && "body" in response && "status" in response ? response.body : response;
  const status =
    isObj(response) && typeof response.status === "number" ? response.status : undefined;
  const turns = bodyTurns(body);
  const head = status === undefined ? "" : html`<p class="legend">HTTP ${status}</p>`;
  if (turns !== undefined) return html`${head}${renderTurns(turns, false)}${rawJson}`;
  if (typeof body === "string") return html`${head}<pre class="code">${body}</pre>${rawJson}`;
  return html`${head}<pre class="code">${JSON.stringify(body ?? null, null, 2)}</pre>`;
}

/** The plain text of a response, for word diffs. */
export function responseText(response: JsonValue): string {
  if (isObj(response) && response.kind === "stream" && Array.isArray(response.events))
    return streamText(response.events);
  const body =
    isObj(response) && "body" in response && "status" in response ? response.body : response;
  const turns = bodyTurns(body);
  if (turns !== undefined)
    return turns.map((t) => [t.text, ...t.extra.map((x) => x.body)].join("\n")).join("\n\n");
  return typeof body === "string" ? body : JSON.stringify(body ?? null, null, 2);
}
