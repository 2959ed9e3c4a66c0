/**
 * The proxy's upstream calls over `node:http`/`node:https` with keep-alive
 * agents, as a `fetch` for `createFetch` (a `FetchLike`). Why not the
 * global `fetch`: undici's WHATWG machinery (a `Request`, `Headers`, a web
 * stream per body) cost more CPU per recorded call than the rest of the
 * proxy's own work (docs/performance.md, proxy section); a recording proxy
 * calls upstream once per recording.
 *
 * What it keeps of `fetch`'s behaviour, because `createFetch` and the
 * proxy's error answers rely on it:
 * - it resolves to a `Response` (status, status text, headers, body); a
 *   `text/event-stream` body streams as it arrives (the SSE tee), any other
 *   body is read whole first (the recorder reads it whole anyway);
 * - `gzip`, `deflate` and `br` bodies are asked for and decoded (the
 *   `content-encoding` header stays, as `fetch` leaves it; the proxy drops it);
 * - redirects are followed (at most 20): 307/308 repeat the method and body,
 *   301/302 turn a POST into a GET and 303 anything but HEAD, without a
 *   body; a redirect to another origin drops the credential headers;
 * - a connection failure rejects with `TypeError("fetch failed")` whose
 *   `cause` is the socket error (its `code`, e.g. ECONNREFUSED, names no
 *   credential); an abort rejects with the signal's reason.
 * Credentials go only into the request's headers: nothing here logs.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { FetchLike } from "../adapters/index.js";

/** Redirects followed before giving up, as `fetch`. */
const MAX_REDIRECTS = 20;
/** Statuses whose Response has no body (the constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Request headers dropped on a redirect to another origin (credentials). */
const CREDENTIALS = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
];

/** A `fetch` to upstreams over keep-alive agents; `close()` ends its idle sockets. */
export interface UpstreamFetch {
  readonly fetch: FetchLike;
  close(): void;
}

/**
 * A `fetch` over node:http(s) with keep-alive agents (one per protocol).
 * Requests whose input or body it does not handle (a `Request` object, a
 * stream body) go to the global `fetch`.
 */
export function createUpstreamFetch(): UpstreamFetch {
  const agents = {
    "http:": new HttpAgent({ keepAlive: true, maxSockets: 256 }),
    "https:": new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
  };
  const fetch: FetchLike = async (input, init = {}) => {
    const body = bodyBytes(init.body);
    if (input instanceof Request || body === null) return globalThis.fetch(input, init);
    let url = new URL(input);
    let method = (init.method ?? "GET").toUpperCase();
    let payload = body;
    const headers = requestHeaders(init.headers);
    for (let redirects = 0; ; redirects++) {
      const res = await send(agents, url, method, headers, payload, init.signal ?? undefined);
      const location = res.headers.location;
      if (!isRedirect(res.statusCode ?? 0) || location === undefined) return toResponse(res, init);
      res.resume(); // the redirect's own body is not read
      if (redirects >= MAX_REDIRECTS) {
        throw new TypeError("fetch failed", { cause: new Error("too many redirects") });
      }
      const next = new URL(location, url);
      if (next.protocol !== "http:" && next.protocol !== "https:") {
        throw new TypeError("fetch failed", {
          cause: new Error(`redirect to an unsupported protocol ${next.protocol}`),
        });
      }
      const status = res.statusCode as number;
      if (
        (status === 303 && method !== "HEAD") ||
        ((status === 301 || status === 302) && method === "POST")
      ) {
        method = "GET";
        payload = undefined;
        for (const name of [
          "content-type",
          "content-length",
          "content-encoding",
          "content-language",
          "content-location",
        ]) {
          headers.delete(name);
        }
      }
      if (next.origin !== url.origin) for (const name of CREDENTIALS) headers.delete(name);
      url = next;
    }
  };
  return {
    fetch,
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}

/** The request body as bytes; undefined for none, null for a kind this fetch leaves to the global one. */
function bodyBytes(body: RequestInit["body"]): Buffer | undefined | null {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return null;
}

/** Lowercase names, values as `Headers` combines them. */
function requestHeaders(init: RequestInit["headers"]): Map<string, string> {
  const out = new Map<string, string>();
  new Headers(init).forEach((value, name) => {
    out.set(name, value);
  });
  return out;
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** One request; resolves at the response's head. */
function send(
  agents: { "http:": HttpAgent; "https:": HttpsAgent },
  url: URL,
  method: string,
  headers: Map<string, string>,
  body: Buffer | undefined,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const out: Record<string, string> = {};
    for (const [name, value] of headers) {
      if (name === "host" || name === "connection" || name === "content-length") continue;
      out[name] = value;
    }
    out["accept-encoding"] ??= "gzip, deflate, br";
    if (body !== undefined) out["content-length"] = String(body.length);
    else if (method !== "GET" && method !== "HEAD") out["content-length"] = "0";
    const https = url.protocol === "https:";
    if (!https && url.protocol !== "http:") {
      reject(
        new TypeError("fetch failed", { cause: new Error(`unsupported protocol ${url.protocol}`) }),
      );
      return;
    }
    const req = (https ? httpsRequest : httpRequest)(url, {
      method,
      headers: out,
      agent: agents[https ? "https:" : "http:"],
    });
    const onAbort = () => {
      const reason = abortReason(signal as AbortSignal);
      req.destroy(reason as Error);
      reject(reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("response", (res) => {
      // Aborting later cuts the body (a stream being teed, or one being read).
      if (signal !== undefined) {
        signal.removeEventListener("abort", onAbort);
        const cut = () => res.destroy(abortReason(signal) as Error);
        signal.addEventListener("abort", cut, { once: true });
        res.once("close", () => signal.removeEventListener("abort", cut));
      }
      resolve(res);
    });
    req.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(
        signal?.aborted ? abortReason(signal) : new TypeError("fetch failed", { cause: error }),
      );
    });
    req.end(body);
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** The Response for `res`: an event stream as it arrives, any other body read whole. */
async function toResponse(res: IncomingMessage, init: RequestInit): Promise<Response> {
  const status = res.statusCode as number;
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  const meta = { status, statusText: res.statusMessage ?? "", headers };
  if (NULL_BODY.has(status) || init.method?.toUpperCase() === "HEAD") {
    res.resume();
    return new Response(null, meta);
  }
  const decoded = decode(res, headers.get("content-encoding"));
  const type = (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "text/event-stream") {
    return new Response(Readable.toWeb(decoded) as ReadableStream<Uint8Array>, meta);
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of decoded) chunks.push(chunk as Buffer);
  } catch (error) {
    if (init.signal?.aborted) throw abortReason(init.signal);
    throw new TypeError("fetch failed", { cause: error });
  }
  return new Response(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), meta);
}

/** The body decoded by its `content-encoding` (the last coding applied first undone). */
function decode(res: IncomingMessage, encoding: string | null): Readable {
  const codings = (encoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  let stream: Readable = res;
  for (const coding of codings.reverse()) {
    const step =
      coding === "gzip" || coding === "x-gzip"
        ? createGunzip()
        : coding === "deflate"
          ? createInflate()
          : coding === "br"
            ? createBrotliDecompress()
            : undefined;
    if (step === undefined) return stream; // unknown: left as sent, as fetch does
    const from = stream;
    from.once("error", (error) => step.destroy(error));
    stream = from.pipe(step);
  }
  return stream;
}
