/** The page frame: header with navigation, main, footer; one document per page. */
import { CLIENT_SCRIPT } from "../client.js";
import { html, raw, type SafeHtml } from "../escape.js";
import { type Links, paths } from "../links.js";
import { STYLES } from "../styles.js";

export type Section = "overview" | "misses" | "cassettes" | "none";

/** What the frame needs to know. */
export interface Frame {
  links: Links;
  source: string;
  version: string;
  /** Whether the source is a cassette folder (shows the Cassettes tab). */
  cassettes: boolean;
}

function nav(frame: Frame, on: Section): SafeHtml {
  const item = (section: Section, path: string, label: string) =>
    html`<a href="${frame.links.to(path)}" class="${on === section ? "on" : ""}">${label}</a>`;
  return html`<nav>${item("overview", paths.overview(), "Overview")}${item("misses", paths.misses(), "Misses")}${frame.cassettes ? item("cassettes", paths.cassettes(), "Cassettes") : ""}</nav>`;
}

export function header(frame: Frame, on: Section): SafeHtml {
  return html`<header class="top"><a class="brand" href="${frame.links.to(paths.overview())}">invocache <span>view</span></a>${nav(frame, on)}<span class="src" title="${frame.source}">${frame.source}</span></header>`;
}

const FOOT = (frame: Frame) =>
  html`<footer>invocache ${frame.version} · read-only · <kbd>/</kbd> search · <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> open</footer>`;

/**
 * A full page for the server. `nonce` lets the inline script run under a
 * Content-Security-Policy that allows no other script.
 */
export function page(
  frame: Frame,
  on: Section,
  title: string,
  body: SafeHtml,
  nonce: string,
): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · invocache view</title><style nonce="${nonce}">${raw(STYLES)}</style></head>
<body>${header(frame, on)}<main>${body}</main>${FOOT(frame)}<script nonce="${nonce}">${raw(CLIENT_SCRIPT)}</script></body></html>`
    .value;
}

/** One exported section: a page body under its route. */
export interface ExportSection {
  route: string;
  on: Section;
  body: SafeHtml;
}

/**
 * The one-file report: every section in one document, shown one at a time by
 * the URL's `#`. Its policy allows no fetch, image, font or frame at all, so
 * opening it offline makes no request.
 */
export function exportDocument(frame: Frame, title: string, sections: ExportSection[]): string {
  const csp =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}"><meta name="referrer" content="no-referrer">
<title>${title}</title><style>${raw(STYLES)}</style></head>
<body>${sections.map((s) => html`<section data-route="${s.route}"${s.route === "/" ? "" : raw(" hidden")}>${header(frame, s.on)}<main>${s.body}</main></section>`)}${FOOT(frame)}<script>${raw(CLIENT_SCRIPT)}</script></body></html>`
    .value;
}
