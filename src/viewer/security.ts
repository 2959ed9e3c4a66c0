/**
 * The viewer's request checks, kept apart from routing so each can be read
 * and tested alone. The viewer shows prompts and responses, so it treats
 * every request as hostile until it proves otherwise:
 *
 * - Host must be the viewer's own `127.0.0.1:<port>` / `localhost:<port>`:
 *   a DNS-rebinding page (evil.example resolving to 127.0.0.1) sends its own
 *   name as Host and is refused.
 * - Origin, when sent, must be the viewer's own origin (no cross-site reads
 *   or form posts).
 * - A token: the printed URL carries `?token=…` (32 random bytes, as
 *   notebook servers do); the first visit trades it for an HttpOnly,
 *   SameSite=Strict cookie and a redirect that drops it from the address
 *   bar. Any request without the token or the cookie is refused, so another
 *   local user or page that guesses the port learns nothing.
 * - Read-only: only GET and HEAD.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const COOKIE = "invocache_view";

/** A fresh unguessable token (256 bits, URL-safe). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === COOKIE) return value.join("=");
  }
  return undefined;
}

/** What to do with a request. */
export type Verdict =
  | { ok: true; setCookie: boolean; stripToken: boolean }
  | { ok: false; status: number; reason: string };

/**
 * Check a request against the viewer's host, port and token.
 *
 * @example
 * const v = checkRequest(req, { port: 7788, token });
 * if (!v.ok) { res.writeHead(v.status); res.end(v.reason); }
 */
export function checkRequest(req: IncomingMessage, opts: { port: number; token: string }): Verdict {
  const hosts = [`127.0.0.1:${opts.port}`, `localhost:${opts.port}`];
  const host = req.headers.host ?? "";
  if (!hosts.includes(host.toLowerCase()))
    return {
      ok: false,
      status: 403,
      reason: `invocache view: refused Host ${JSON.stringify(host)}; open the URL it printed.`,
    };
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.some((h) => origin.toLowerCase() === `http://${h}`))
    return {
      ok: false,
      status: 403,
      reason: `invocache view: refused Origin ${JSON.stringify(origin)}.`,
    };
  if (req.method !== "GET" && req.method !== "HEAD")
    return { ok: false, status: 405, reason: "invocache view is read-only: GET and HEAD only." };
  const url = new URL(req.url ?? "/", `http://${host}`);
  const fromQuery = url.searchParams.get("token");
  if (fromQuery !== null && same(fromQuery, opts.token))
    return { ok: true, setCookie: true, stripToken: true };
  const fromCookie = cookieToken(req.headers.cookie);
  if (fromCookie !== undefined && same(fromCookie, opts.token))
    return { ok: true, setCookie: false, stripToken: false };
  return {
    ok: false,
    status: 401,
    reason:
      "invocache view: missing or wrong token; open the URL with ?token=… that `invocache view` printed.",
  };
}

/** The headers every viewer response carries. */
export function securityHeaders(nonce: string): Record<string, string> {
  return {
    "content-security-policy": `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
  };
}
