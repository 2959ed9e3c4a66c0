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
  | { kind: "redis"; url: string; connectUrl: string; timeoutMs?: number }
  | { kind: "postgres"; url: string; connectUrl: string; timeoutMs?: number };

/** The longest store operation timeout accepted (a setTimeout limit). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

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
 * - Redis and Postgres URLs take `?timeoutMs=N` (see `openStore`); it is
 *   removed before the URL reaches the driver. The password may hold any
 *   character, raw or percent-encoded: the userinfo ends at the last `@`.
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

/**
 * Split a network store URL defensively. The userinfo ends at the LAST `@`,
 * so a password typed raw with `/`, `#`, `?` or `@` in it is still a password
 * (a WHATWG parser would end the authority at the first of those and take
 * part of the password for the host or path). Only the credential-free rest
 * goes through `new URL`, so a parse error can never carry the password.
 */
function splitNetworkUrl(text: string): {
  parsed: URL;
  username: string;
  password: string;
  timeoutMs: number | undefined;
} {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.exec(text)?.[0];
  if (scheme === undefined) throw bad(text, `write "${text.split(":")[0]}://host"`);
  const rest = text.slice(scheme.length);
  const at = rest.lastIndexOf("@");
  const userinfo = at === -1 ? undefined : rest.slice(0, at);
  const colon = userinfo?.indexOf(":") ?? -1;
  const username = userinfo === undefined ? "" : colon === -1 ? userinfo : userinfo.slice(0, colon);
  const password = userinfo === undefined || colon === -1 ? "" : userinfo.slice(colon + 1);
  let parsed: URL;
  try {
    parsed = new URL(scheme + rest.slice(at + 1));
  } catch {
    // No cause attached: Node's error carries the input.
    throw bad(text, "it is not a well-formed URL");
  }
  const timeoutMs = parsed.searchParams.has("timeoutMs")
    ? urlTimeout(text, parsed.searchParams.get("timeoutMs") ?? "")
    : undefined;
  parsed.searchParams.delete("timeoutMs");
  return { parsed, username: decodeLoose(username), password: decodeLoose(password), timeoutMs };
}

/** Percent-decode when the text is valid percent-encoding, else take it as typed. */
function decodeLoose(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function urlTimeout(text: string, value: string): number {
  const n = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_TIMEOUT_MS)) {
    throw bad(text, `timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  return n;
}

/**
 * The URL a driver gets: credentials percent-encoded, so that it parses
 * back to exactly what was typed, and without our own `timeoutMs` parameter.
 */
function connectUrl(parsed: URL, username: string, password: string): string {
  const auth =
    username === "" && password === ""
      ? ""
      : `${encodeURIComponent(username)}${password === "" ? "" : `:${encodeURIComponent(password)}`}@`;
  return `${parsed.protocol}//${auth}${parsed.host}${parsed.pathname}${parsed.search}`;
}

function withTimeout<T extends object>(location: T, timeoutMs: number | undefined): T {
  return timeoutMs === undefined ? location : { ...location, timeoutMs };
}

function parseRedis(text: string): StoreLocation {
  const { parsed, username, password, timeoutMs } = splitNetworkUrl(text);
  if (parsed.hostname === "")
    throw bad(text, "a Redis URL needs a host, e.g. redis://127.0.0.1:6379");
  if (!/^(\/\d*)?$/.test(parsed.pathname)) {
    throw bad(text, "the path of a Redis URL is the database number, e.g. redis://host:6379/2");
  }
  const path = parsed.pathname === "/" ? "" : parsed.pathname;
  return withTimeout(
    {
      kind: "redis" as const,
      url: `${parsed.protocol}//${parsed.host}${path}`,
      connectUrl: connectUrl(parsed, username, password),
    },
    timeoutMs,
  );
}

function parsePostgres(text: string): StoreLocation {
  const { parsed, username, password, timeoutMs } = splitNetworkUrl(text);
  // Query parameters are left out of store.url: libpq accepts ?password=… there.
  return withTimeout(
    {
      kind: "postgres" as const,
      url: `${parsed.protocol}//${parsed.host}${parsed.pathname}`,
      connectUrl: connectUrl(parsed, username, password),
    },
    timeoutMs,
  );
}

/**
 * `url` without credentials or query string, for messages: `//user:pw@` goes,
 * `?password=…` goes. Robust on any input: everything up to the last `@` is
 * taken for userinfo (a raw password may hold `/`, `#`, `?` or `@`), so a
 * malformed URL loses more than its password, never less.
 *
 * @example
 * redactUrl("redis://u:secret@host:6379/0") // "redis://host:6379/0"
 * redactUrl("redis://u:pa/ss#word@host") // "redis://host"
 */
export function redactUrl(url: string): string {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:(\/\/)?/.exec(url)?.[0] ?? "";
  let rest = url.slice(scheme.length);
  const at = rest.lastIndexOf("@");
  if (at !== -1) rest = rest.slice(at + 1);
  return scheme + rest.replace(/[?#].*$/s, "");
}

function bad(url: string, why: string): TypeError {
  return new TypeError(`url ${JSON.stringify(redactUrl(url))} is malformed: ${why}; ${valid()}`);
}

function valid(): string {
  return `valid schemes: ${STORE_SCHEMES.join(", ")}`;
}
