/**
 * The upstreams a proxy forwards to, by the path prefix that names them:
 * `/openai/v1/chat/completions` goes to `https://api.openai.com/v1/chat/completions`.
 */
import { ProxyError } from "./errors.js";

/** The upstreams every proxy knows; `upstreams` (`--upstream NAME=URL`) adds or overrides. */
export const BUILTIN_UPSTREAMS: Readonly<Record<string, string>> = Object.freeze({
  openai: "https://api.openai.com",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
});

/** Names the proxy reserves for itself: never an upstream. */
const RESERVED = new Set(["_invocache", "_session"]);
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The built-in upstreams with `extra` added or overriding, each base URL
 * checked (http or https, no query, no credentials, no trailing slash kept).
 *
 * @throws ProxyError naming the upstream when a name or URL is malformed.
 * @example
 * resolveUpstreams({ local: "http://127.0.0.1:11434" }).local // "http://127.0.0.1:11434"
 */
export function resolveUpstreams(extra: Readonly<Record<string, string>> = {}): Map<string, URL> {
  const out = new Map<string, URL>();
  for (const [name, url] of Object.entries({ ...BUILTIN_UPSTREAMS, ...extra })) {
    if (!NAME.test(name) || RESERVED.has(name)) {
      throw new ProxyError(
        "ERR_PROXY_UPSTREAM",
        "upstream",
        `upstream name ${JSON.stringify(name)} is not usable as a path prefix; use letters, digits, ".", "_" or "-" (not _invocache or _session), e.g. --upstream local=http://127.0.0.1:11434`,
      );
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ProxyError(
        "ERR_PROXY_UPSTREAM",
        "upstream",
        `upstream ${name}: ${JSON.stringify(url)} is not a URL; write --upstream ${name}=http://host:port`,
      );
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ProxyError(
        "ERR_PROXY_UPSTREAM",
        "upstream",
        `upstream ${name}: only http and https URLs are forwarded to, got ${parsed.protocol}`,
      );
    }
    if (
      parsed.username !== "" ||
      parsed.password !== "" ||
      parsed.search !== "" ||
      parsed.hash !== ""
    ) {
      // Credentials belong in the client's request headers, which go upstream as sent.
      throw new ProxyError(
        "ERR_PROXY_UPSTREAM",
        "upstream",
        `upstream ${name}: give the base URL only (no user:password, query or #fragment); clients send their own credentials`,
      );
    }
    out.set(name, parsed);
  }
  return out;
}

/**
 * Parse `NAME=URL` (the CLI's `--upstream`).
 *
 * @example
 * parseUpstreamFlag("local=http://127.0.0.1:8080") // ["local", "http://127.0.0.1:8080"]
 */
export function parseUpstreamFlag(text: string): [string, string] {
  const eq = text.indexOf("=");
  if (eq <= 0 || eq === text.length - 1) {
    throw new ProxyError(
      "ERR_PROXY_UPSTREAM",
      "upstream",
      `--upstream ${JSON.stringify(text)}: write NAME=URL, e.g. --upstream local=http://127.0.0.1:11434`,
    );
  }
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** The upstream URL a proxied path and query go to. */
export function upstreamUrl(base: URL, path: string, search: string): URL {
  const url = new URL(base.href);
  // A bare origin's pathname is "/": never join it into "//v1/…".
  url.pathname = `${base.pathname.replace(/\/+$/, "")}${path}`;
  url.search = search;
  return url;
}
