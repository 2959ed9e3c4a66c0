/**
 * The one-file report: the same views as the server, rendered once into
 * sections of a single HTML file with inline styles and script and a
 * policy that forbids every request, so CI can attach it to a failed build
 * and anyone can open it offline. Bounded: the newest `limit` entries, the
 * runs, the diffs between each retry and the attempt it retried, misses and
 * cassettes.
 */
import { writeFile } from "node:fs/promises";
import { INVOCACHE_VERSION } from "../version.js";
import { type CatalogLocation, openViewerCatalog } from "./catalog.js";
import { sourceFlag } from "./commands.js";
import { retryOf } from "./lineage.js";
import { exportLinks, paths } from "./links.js";
import { viewerMissLog } from "./miss-log.js";
import { type RouteContext, renderRoute } from "./routes.js";
import { defaultStampRoot, StampIndex } from "./stamps.js";
import { type ExportSection, exportDocument } from "./views/layout.js";

/** Options of {@link exportReport}. */
export interface ExportOptions {
  /** How many of the newest entries get a page (default 500). */
  limit?: number;
  missLog?: string;
  maxAgeMs?: number;
  /** The folder searched for provenance stamps (default: the store's folder or the cassette folder). */
  stamps?: string;
  /** The report's title. */
  title?: string;
}

/** What {@link exportReport} wrote. */
export interface ExportSummary {
  path: string;
  bytes: number;
  sections: number;
}

/**
 * Render the report as one HTML string.
 *
 * @example
 * const htmlText = await renderReport({ store: "sqlite://.invocache/cache.sqlite" });
 */
export async function renderReport(
  location: CatalogLocation,
  options: ExportOptions = {},
): Promise<{ html: string; sections: number }> {
  const catalog = await openViewerCatalog(location, { refreshMs: Number.POSITIVE_INFINITY });
  try {
    const snap = await catalog.snapshot();
    const limit = options.limit ?? 500;
    const ctx: RouteContext = {
      catalog,
      links: exportLinks(),
      missLog: options.missLog ?? viewerMissLog(location, catalog.url),
      sourceFlag: sourceFlag(location, catalog.url),
      maxAgeMs: options.maxAgeMs,
      stamps: new StampIndex(
        options.stamps ?? defaultStampRoot(location, catalog.url),
        Number.POSITIVE_INFINITY,
      ),
      exportLimit: limit,
    };
    const routes = new Set<string>([paths.overview(), paths.misses()]);
    if (catalog.kind === "cassette") routes.add(paths.cassettes());
    const shown = snap.entries.slice(0, limit);
    for (const r of snap.runs) routes.add(paths.run(r.namespace, r.runId));
    for (const r of snap.runs.slice(0, 20))
      for (const o of snap.runs.slice(0, 20))
        if (o !== r)
          routes.add(paths.compare(`${r.namespace}/${r.runId}`, `${o.namespace}/${o.runId}`));
    const inRuns = new Set(
      snap.runs.flatMap((r) => r.calls.map((c) => `${r.namespace}:e:${c.id}:${c.occurrence}`)),
    );
    const pages = [...shown, ...snap.entries.slice(limit).filter((e) => inRuns.has(e.key))];
    for (const e of pages) {
      routes.add(paths.entry(e.key, e.file));
      const parent = retryOf(snap, e);
      if (parent !== undefined) routes.add(paths.diff(parent.key, e.key));
    }
    const sections: ExportSection[] = [];
    for (const route of routes) {
      const r = await renderRoute(route, ctx);
      if (r.status === 200) sections.push({ route, on: r.on, body: r.body });
    }
    const html = exportDocument(
      {
        links: ctx.links,
        source: catalog.url,
        version: INVOCACHE_VERSION,
        cassettes: catalog.kind === "cassette",
      },
      options.title ?? `invocache report · ${catalog.url}`,
      sections,
    );
    return { html, sections: sections.length };
  } finally {
    await catalog.close();
  }
}

/**
 * Write the report to `path`.
 *
 * @example
 * await exportReport({ store: "sqlite://.invocache/cache.sqlite" }, "report.html");
 */
export async function exportReport(
  location: CatalogLocation,
  path: string,
  options: ExportOptions = {},
): Promise<ExportSummary> {
  const { html, sections } = await renderReport(location, options);
  await writeFile(path, html);
  return { path, bytes: Buffer.byteLength(html), sections };
}
