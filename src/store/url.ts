/**
 * Store URLs: which backend, where, and how to show the location in messages
 * without leaking a password.
 */
import { join, resolve } from "node:path";

/** The schemes `openStore` accepts, as they appear in error messages. */
export const STORE_SCHEMES = [
  "sqlite://",
  "memory://",
  "redis://",
  "rediss://",
  "postgres://",
  "postgresql://",
] as const;

/** Where the embedded store lives under a project root. */
export const DEFAULT_SQLITE_PATH = join(".invocache", "cache.sqlite");

/** A parsed store URL. `url` is the redacted form shown as `store.url`. */
export type StoreLocation =
  | { kind: "memory"; url: string }
  | { kind: "sqlite"; url: string; path: string }
  | { kind: "redis"; url: string; connectUrl: string }
  | { kind: "postgres"; url: string; connectUrl: string };

/**
 * The URL of the embedded store of a project: `sqlite://<root>/.invocache/cache.sqlite`.
 *
 * @example
 * defaultStoreUrl("/work/app") // "sqlite:///work/app/.invocache/cache.sqlite"
 */
export function defaultStoreUrl(projectRoot: string): string {
  if (typeof projectRoot !== "string" || projectRoot === "") {
    throw new TypeError("projectRoot must be a non-empty path");
  }
  return `sqlite://${resolve(projectRoot, DEFAULT_SQLITE_PATH)}`;
}

/**
 * Parse a store URL. Throws a `TypeError` naming `url` and listing the valid
 * schemes when the scheme is unknown or the URL is malformed.
 *
 * - `sqlite://path`: everything after `sqlite://` is a file path, verbatim;
 *   relative paths resolve against `cwd`; `sqlite:///abs` is absolute;
 *   `sqlite://` alone is `<cwd>/.invocache/cache.sqlite`.
 * - `memory://`: a new, empty, private store per `openStore` call.
 * - `redis://[user:pass@]host[:port][/db]`, `rediss://` for TLS.
 * - `postgres://…`, `postgresql://…`: a libpq-style connection URL.
 *
 * @example
 * parseStoreUrl("sqlite://cache.sqlite", "/app") // { kind: "sqlite", path: "/app/cache.sqlite", … }
 */
export function parseStoreUrl(url: string, cwd: string = process.cwd()): StoreLocation {
  if (typeof url !== "string") {
    throw new TypeError(
      `url must be a string such as "sqlite://.invocache/cache.sqlite"; ${valid()}`,
    );
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case "sqlite":
      return parseSqlite(url);
    case "memory":
      if (url.toLowerCase() !== "memory://") {
        throw bad(url, 'a memory store takes no path: use "memory://"');
      }
      return { kind: "memory", url: "memory://" };
    case "redis":
    case "rediss":
      return parseRedis(url);
    case "postgres":
    case "postgresql":
      return parsePostgres(url);
    default:
      throw new TypeError(
        `url ${JSON.stringify(redactUrl(url))} has ${scheme === undefined ? "no scheme" : `an unknown scheme "${scheme}:"`}; ${valid()}`,
      );
  }

  function parseSqlite(text: string): StoreLocation {
    if (!text.toLowerCase().startsWith("sqlite://")) throw bad(text, 'write "sqlite://path"');
    const raw = text.slice("sqlite://".length);
    if (raw === ":memory:") return { kind: "sqlite", url: "sqlite://:memory:", path: ":memory:" };
    const path = raw === "" ? resolve(cwd, DEFAULT_SQLITE_PATH) : resolve(cwd, raw);
    return { kind: "sqlite", url: `sqlite://${path}`, path };
  }
}

function parseRedis(text: string): StoreLocation {
  const parsed = parseWhatwg(text);
  if (parsed.hostname === "")
    throw bad(text, "a Redis URL needs a host, e.g. redis://127.0.0.1:6379");
  if (!/^(\/\d*)?$/.test(parsed.pathname)) {
    throw bad(text, "the path of a Redis URL is the database number, e.g. redis://host:6379/2");
  }
  const path = parsed.pathname === "/" ? "" : parsed.pathname;
  return { kind: "redis", url: `${parsed.protocol}//${parsed.host}${path}`, connectUrl: text };
}

function parsePostgres(text: string): StoreLocation {
  const parsed = parseWhatwg(text);
  // Query parameters are left out of store.url: libpq accepts ?password=… there.
  return {
    kind: "postgres",
    url: `${parsed.protocol}//${parsed.host}${parsed.pathname}`,
    connectUrl: text,
  };
}

function parseWhatwg(text: string): URL {
  try {
    return new URL(text);
  } catch (cause) {
    const error = bad(text, "it is not a well-formed URL");
    error.cause = cause;
    throw error;
  }
}

/**
 * `url` without credentials or query string, for messages: `//user:pw@` goes,
 * `?password=…` goes. Best effort on malformed input too.
 *
 * @example
 * redactUrl("redis://u:secret@host:6379/0") // "redis://host:6379/0"
 */
export function redactUrl(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#]*@/, "$1").replace(/[?#].*$/s, "");
}

function bad(url: string, why: string): TypeError {
  return new TypeError(`url ${JSON.stringify(redactUrl(url))} is malformed: ${why}; ${valid()}`);
}

function valid(): string {
  return `valid schemes: ${STORE_SCHEMES.join(", ")}`;
}
