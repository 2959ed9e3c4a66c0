/**
 * The viewer's HTTP server: 127.0.0.1 only, every request checked
 * (security.ts) before it is routed (routes.ts), pages rendered on the
 * server, nothing but HTML served.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { INVOCACHE_VERSION } from "../version.js";
import { type CatalogLocation, openViewerCatalog } from "./catalog.js";
import { sourceFlag } from "./commands.js";
import { serverLinks } from "./links.js";
import { viewerMissLog } from "./miss-log.js";
import { renderRoute } from "./routes.js";
import { COOKIE, checkRequest, newToken, securityHeaders } from "./security.js";
import { defaultStampRoot, StampIndex } from "./stamps.js";
import { page } from "./views/layout.js";

/** Options of {@link startViewer}. */
export interface ViewerOptions {
  /** Port on 127.0.0.1 (default 0: any free port). */
  port?: number;
  /** The token for the URL (default: a fresh random one). */
  token?: string;
  /** The miss log to show (default: beside the store or cassettes). */
  missLog?: string;
  /** Mark cassette entries older than this as stale, ms. */
  maxAgeMs?: number;
  /** The folder searched for provenance stamps (default: the store's folder or the cassette folder). */
  stamps?: string;
  /** Re-read the source when the snapshot is older than this (default 3000 ms). */
  refreshMs?: number;
}

/** A running viewer. */
export interface Viewer {
  /** The URL to open, token included. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

/**
 * Start the viewer on 127.0.0.1 for a store or a cassette file or folder.
 *
 * @example
 * const viewer = await startViewer({ store: "sqlite://.invocache/cache.sqlite" });
 * console.log(viewer.url); // http://127.0.0.1:41234/?token=…
 * await viewer.close();
 */
export async function startViewer(
  location: CatalogLocation,
  options: ViewerOptions = {},
): Promise<Viewer> {
  const catalog = await openViewerCatalog(location, { refreshMs: options.refreshMs ?? 3000 });
  // With stored metadata nothing is read up front; without, the whole store is.
  await catalog.prepare();
  const token = options.token ?? newToken();
  const missLog = options.missLog ?? viewerMissLog(location, catalog.url);
  const flag = sourceFlag(location, catalog.url);
  const stamps = new StampIndex(
    options.stamps ?? defaultStampRoot(location, catalog.url),
    options.refreshMs ?? 3000,
  );
  let port = 0;
  const server: Server = createServer((req, res) => {
    const verdict = checkRequest(req, { port, token });
    if (!verdict.ok) {
      res.writeHead(verdict.status, {
        "content-type": "text/plain; charset=utf-8",
        ...securityHeaders("none"),
      });
      res.end(`${verdict.reason}\n`);
      return;
    }
    const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
    if (verdict.stripToken) {
      url.searchParams.delete("token");
      res.writeHead(303, {
        location: `${url.pathname}${url.search}`,
        "set-cookie": `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        ...securityHeaders("none"),
      });
      res.end();
      return;
    }
    const nonce = randomBytes(16).toString("base64");
    renderRoute(`${url.pathname}${url.search}`, {
      catalog,
      links: serverLinks(),
      missLog,
      sourceFlag: flag,
      maxAgeMs: options.maxAgeMs,
      stamps,
    })
      .then((r) => {
        const body = page(
          {
            links: serverLinks(),
            source: catalog.url,
            version: INVOCACHE_VERSION,
            cassettes: catalog.kind === "cassette",
          },
          r.on,
          r.title,
          r.body,
          nonce,
        );
        res.writeHead(r.status, {
          "content-type": "text/html; charset=utf-8",
          ...securityHeaders(nonce),
        });
        res.end(req.method === "HEAD" ? undefined : body);
      })
      .catch((error: unknown) => {
        res.writeHead(500, {
          "content-type": "text/plain; charset=utf-8",
          ...securityHeaders("none"),
        });
        res.end(`invocache view: ${(error as Error).message}\n`);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await catalog.close();
    },
  };
}
