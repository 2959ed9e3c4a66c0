/**
 * The route table: a viewer path to a rendered page body. The server calls
 * it per request; the export calls it for each section of the report.
 */
import type { ViewerCatalog } from "./catalog.js";
import { html, type SafeHtml } from "./escape.js";
import type { Links } from "./links.js";
import type { MetaCatalog } from "./meta-catalog.js";
import { readMissLog } from "./miss-log.js";
import { diffRuns } from "./run-diff.js";
import type { StampIndex } from "./stamps.js";
import { cassettesView } from "./views/cassettes.js";
import { diffView } from "./views/diff.js";
import { entryView } from "./views/entry.js";
import type { Section } from "./views/layout.js";
import { missesView, snapshotCandidates } from "./views/misses.js";
import {
  type OverviewData,
  type OverviewQuery,
  overviewQuery,
  overviewView,
  PAGE_SIZE,
  snapshotOverview,
} from "./views/overview.js";
import { compareView, findRun, runRef, runView } from "./views/run.js";

/** What every route needs. */
export interface RouteContext {
  catalog: ViewerCatalog;
  links: Links;
  missLog: string;
  /** `--store URL` or `--cassette PATH`, for the CLI commands an entry page shows. */
  sourceFlag: string;
  maxAgeMs: number | undefined;
  /** Provenance stamps, by the identity they reference (entry pages list them). */
  stamps?: StampIndex | undefined;
  /** In an export: how many entries the overview lists. */
  exportLimit?: number;
}

/** A rendered page. */
export interface Rendered {
  status: number;
  title: string;
  on: Section;
  body: SafeHtml;
}

const notFound = (what: string): Rendered => ({
  status: 404,
  title: "Not found",
  on: "none",
  body: html`<h1>Not found</h1><p class="sub">${what}</p><p><a href="/">Back to the overview</a></p>`,
});

/**
 * Render the page at `path` (with its query), or a 404 page.
 *
 * @example
 * const page = await renderRoute("/entry/demo%3Ae%3A…%3A0", ctx);
 */
export async function renderRoute(pathAndQuery: string, ctx: RouteContext): Promise<Rendered> {
  const url = new URL(pathAndQuery, "http://viewer.invalid");
  const parts = url.pathname.split("/").slice(1).map(decodeURIComponent);
  const { links, catalog } = ctx;
  // With stored metadata (and not exporting) pages read what they show, by
  // key or by one metadata query; without, every page reads the snapshot.
  const meta = ctx.exportLimit === undefined ? await catalog.metadata() : undefined;
  const [head, ...rest] = parts;
  if (head === "" && rest.length === 0) {
    const query = overviewQuery(url.searchParams);
    const data =
      meta === undefined
        ? snapshotOverview(await catalog.snapshot(), query, ctx.exportLimit, catalog.fullReadReason)
        : await metaOverview(meta, query);
    return {
      status: 200,
      title: "Overview",
      on: "overview",
      body: overviewView(links, data, query, ctx.exportLimit),
    };
  }
  if (head === "run" && rest.length === 2) {
    const found =
      meta === undefined
        ? { snap: await catalog.snapshot() }
        : await meta.aroundRun(rest[0]!, rest[1]!);
    const run = found.snap === undefined ? undefined : findRun(found.snap, rest[0]!, rest[1]!);
    if (run === undefined) return notFound(`No run ${rest[1]} in namespace ${rest[0]}.`);
    return {
      status: 200,
      title: `Run ${run.runId}`,
      on: "overview",
      body: runView(links, found.snap!, run),
    };
  }
  if (head === "compare" && rest.length === 0) {
    const a = runRef(url.searchParams.get("a") ?? "");
    const b = runRef(url.searchParams.get("b") ?? "");
    const snap =
      meta === undefined
        ? await catalog.snapshot()
        : await meta.aroundRuns([a || undefined, b || undefined]);
    const ra = a && findRun(snap, a.namespace, a.runId);
    const rb = b && findRun(snap, b.namespace, b.runId);
    if (!ra || !rb)
      return notFound("Compare needs two stored runs: ?a=namespace/runId&b=namespace/runId.");
    return {
      status: 200,
      title: "Compare runs",
      on: "overview",
      body: compareView(
        links,
        snap,
        ra,
        rb,
        await diffRuns(ra, rb, (key) => ctx.catalog.entry(key)),
      ),
    };
  }
  if (head === "entry" && rest.length === 1) {
    const key = rest[0]!;
    const entry = await ctx.catalog.entry(key, url.searchParams.get("file") ?? undefined);
    if (entry === undefined) return notFound(`No entry ${key}.`);
    return {
      status: 200,
      title: `${entry.manifest.role} ${entry.id.slice(0, 12)}`,
      on: "overview",
      body: entryView(
        links,
        catalog.loaded() ?? (await meta?.around(key, entry)) ?? (await catalog.snapshot()),
        key,
        entry,
        {
          flag: ctx.sourceFlag,
          stamps: (await ctx.stamps?.referencing(entry.id)) ?? [],
          stampRoot: ctx.stamps?.root,
        },
      ),
    };
  }
  if (head === "diff" && rest.length === 0) {
    const ka = url.searchParams.get("a") ?? "";
    const kb = url.searchParams.get("b") ?? "";
    const [ea, eb] = await Promise.all([ctx.catalog.entry(ka), ctx.catalog.entry(kb)]);
    if (ea === undefined || eb === undefined)
      return notFound("Diff needs two entry keys: ?a=<key>&b=<key>.");
    return {
      status: 200,
      title: `Diff ${ea.id.slice(0, 12)} → ${eb.id.slice(0, 12)}`,
      on: "overview",
      body: diffView(links, { key: ka, entry: ea }, { key: kb, entry: eb }),
    };
  }
  if (head === "misses" && rest.length === 0) {
    const misses = await readMissLog(ctx.missLog);
    return {
      status: 200,
      title: "Misses",
      on: "misses",
      body: await missesView(
        links,
        catalog,
        meta === undefined
          ? snapshotCandidates(await catalog.snapshot())
          : (...args) => meta.candidates(...args),
        misses,
        ctx.missLog,
      ),
    };
  }
  if (head === "cassettes" && rest.length === 0) {
    return {
      status: 200,
      title: "Cassettes",
      on: "cassettes",
      body: cassettesView(
        links,
        await catalog.snapshot(),
        ctx.catalog.root ?? ctx.catalog.url,
        ctx.maxAgeMs,
      ),
    };
  }
  return notFound(`Nothing at ${url.pathname}.`);
}

/** How long the first overview waits for a big store's totals before it shows its entries without them. */
const TOTALS_WAIT_MS = 500;

/**
 * The overview from stored metadata: this page of entries (one query), and
 * the totals when counted (the first count waits a moment, then the page
 * goes out without them and they follow on a reload).
 */
async function metaOverview(meta: MetaCatalog, query: OverviewQuery): Promise<OverviewData> {
  let facets = meta.totalsNow();
  if (facets === undefined) {
    let timer: NodeJS.Timeout | undefined;
    facets = await Promise.race([
      meta.totals(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), TOTALS_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
  }
  // After the count, so an unfiltered page knows its total.
  const matched = await meta.page(query, query.offset, PAGE_SIZE);
  return {
    facets: facets && {
      entries: facets.entries,
      namespaces: facets.namespaces,
      roles: facets.roles,
      models: facets.models,
      totalMs: facets.totalMs,
      recorded: facets.recorded,
      runs: facets.runs,
      runSpend: facets.runSpend,
      spent: facets.spent,
      saved: facets.saved,
    },
    problems: facets?.problems ?? [],
    matched,
    fromMetadata: true,
  };
}
