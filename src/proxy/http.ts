/**
 * The two ends of a proxied call on node:http: the client's body read with
 * a bound, and the answer written back: a fetch `Response` chunk by chunk as
 * it comes (an SSE answer reaches the client while it is being recorded),
 * or a JSON answer straight from its recording.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JsonAnswer } from "../adapters/index.js";
import { ProxyError } from "./errors.js";

/**
 * Request and response headers that belong to one hop, never forwarded
 * (RFC 9110 §7.6.1), plus the ones fetch recomputes.
 */
export const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);

/**
 * The request body, at most `limit` bytes.
 *
 * @throws ProxyError (413) once the body passes `limit`: reading stops there.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  // Plain listeners, not `for await` over the request: the stream's async
  // iterator sets up end-of-stream tracking, a promise per chunk and a
  // destroy at the end, per request (tens of µs of a replayed call,
  // docs/performance.md, "The proxy's own cost"). What it did is kept:
  // reading stops at the limit (the request is destroyed, as the
  // iterator's return did), and a request that closes before its end
  // rejects.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settle();
        req.destroy();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      settle();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      settle();
      reject(error);
    };
    const onClose = () => {
      settle();
      const error = new Error("the client closed the connection before the request body ended");
      error.name = "AbortError";
      reject(error);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

function tooLarge(limit: number): ProxyError {
  return new ProxyError(
    "ERR_PROXY_TOO_LARGE",
    "body",
    `the request body is larger than ${limit} bytes, the largest entry the store keeps; send less, or start the proxy with a larger --max-body`,
    { status: 413 },
  );
}

/** Send a JSON answer with extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Write `response` to `res`: status, headers minus hop-by-hop (and the
 * encoding fetch already undid), then the body as it arrives, waiting for
 * the client to drain. Resolves when the body is written or the client is
 * gone (then the body is cancelled, which stops the upstream).
 */
export async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string[] | string> = {};
  response.headers.forEach((value, name) => {
    if (HOP_BY_HOP.has(name) || name === "content-encoding") return;
    if (name === "set-cookie") return; // kept below, one header per cookie
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (response.statusText === "") res.writeHead(response.status, headers);
  else res.writeHead(response.status, response.statusText, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const gone = new Promise<"gone">((done) => res.once("close", () => done("gone")));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), gone]);
      if (next === "gone") {
        await reader.cancel(new Error("the client closed the connection")).catch(() => {});
        return;
      }
      if (next.done) break;
      // Flush each chunk now (SSE): write() sends it; wait when the socket is full.
      if (!res.write(next.value)) {
        const drained = await Promise.race([
          new Promise<"drain">((done) => res.once("drain", () => done("drain"))),
          gone,
        ]);
        if (drained === "gone") {
          await reader.cancel(new Error("the client closed the connection")).catch(() => {});
          return;
        }
      }
    }
    res.end();
  } catch (error) {
    // The upstream broke mid-body: the client sees a cut connection, as it would directly.
    res.destroy(error as Error);
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // A read still pending after a cancel: the stream is done with either way.
    }
  }
}

/**
 * Write a JSON answer from its recording, with the status, headers and body
 * `sendResponse` would write for the Response built from it (headers as
 * `Headers` reads them: lowercase names, values trimmed, sorted), plus a
 * `content-length`. No WHATWG Response, stream or reader on the way: this
 * is the proxy's replay path.
 *
 * Returns false, having written nothing, when the recorded headers are
 * anything but plain (a name repeated in another case, a value that is not
 * a string or has a character HTTP forbids: hand-edited recordings): the
 * caller then sends `answer.toResponse()`, so such a recording fails or
 * passes exactly as it did through a Response.
 */
export function sendJsonAnswer(res: ServerResponse, answer: JsonAnswer): boolean {
  const headers = plainHeaders(answer.headers);
  if (headers === undefined || res.headersSent) return false;
  headers["content-length"] = String(Buffer.byteLength(answer.text));
  if (answer.statusText === undefined || answer.statusText === "") {
    res.writeHead(answer.status, headers);
  } else {
    if (!VALUE.test(answer.statusText)) return false;
    res.writeHead(answer.status, answer.statusText, headers);
  }
  res.end(answer.text);
  return true;
}

/** Header names (RFC 9110 token), and values and status texts node and Headers both accept as they are. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** What Headers trims from a value's ends (HTTP whitespace). */
const EDGE_SPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** The recorded headers as `sendResponse` writes them, or undefined when they are not plain. */
function plainHeaders(
  recorded: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  const names: string[] = [];
  for (const key in recorded) {
    if (!Object.hasOwn(recorded, key)) continue;
    const value = recorded[key];
    if (typeof value !== "string" || !TOKEN.test(key)) return undefined;
    const name = key.toLowerCase();
    if (Object.hasOwn(out, name)) return undefined;
    const trimmed = value.replace(EDGE_SPACE, "");
    if (!VALUE.test(trimmed)) return undefined;
    out[name] = trimmed;
    names.push(name);
  }
  // Headers iterates sorted by name; sendResponse drops the same names.
  const sorted: Record<string, string> = {};
  for (const name of names.sort()) {
    if (HOP_BY_HOP.has(name) || name === "content-encoding") continue;
    sorted[name] = out[name] as string;
  }
  return sorted;
}
