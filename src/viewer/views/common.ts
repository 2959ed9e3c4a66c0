/** Small pieces shared by the views: badges, ids, durations, times, pagers. */

import { formatSpend } from "../../usage/index.js";
import { html, type SafeHtml } from "../escape.js";
import type { Recorded } from "../spend.js";

/** The 12-hex short id, git style. */
export function short(id: string): string {
  return id.slice(0, 12);
}

/** A verdict as an icon, a word and a colour (never colour alone). */
export function verdictBadge(verdict: string | undefined): SafeHtml {
  if (verdict === "accepted") return html`<span class="badge accepted">✓ accepted</span>`;
  if (verdict === "rejected") return html`<span class="badge rejected">✗ rejected</span>`;
  return html`<span class="badge plain">– no verdict</span>`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** `2026-12-01 08:47:19 UTC`, readable and unambiguous. */
export function when(iso: string): string {
  if (iso === "") return "–";
  return iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

/** Text shortened to `max` characters on one line. */
export function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** A pager: "1–50 of 100,000 · ← newer · older →". */
export function pager(
  offset: number,
  shown: number,
  total: number | undefined,
  href: (offset: number) => string,
  size: number,
  /** More rows after these (when `total` is not known: a search that stopped at a full page). */
  more = total !== undefined && offset + shown < total,
): SafeHtml {
  if (total === 0 || (shown === 0 && offset === 0)) return html``;
  const prev =
    offset > 0 ? html`<a href="${href(Math.max(0, offset - size))}" rel="prev">← newer</a>` : "";
  const next = more ? html`<a href="${href(offset + size)}" rel="next">older →</a>` : "";
  const of = total === undefined ? "" : ` of ${total.toLocaleString("en")}`;
  return html`<div class="pager"><span>${(offset + 1).toLocaleString("en")}–${(offset + shown).toLocaleString("en")}${of}</span>${prev}${next}</div>`;
}

/**
 * "1.2k tokens ($0.0031) · 812 ms": what recordings cost (or saved), as
 * `invocache stats` prints it, with their model time.
 *
 * @example
 * spendText(spendOf(snap.entries))
 */
export function spendText(r: Recorded): string {
  if (r.entries === 0) return "–";
  return `${formatSpend(r)} · ${formatMs(r.ms)}`;
}
