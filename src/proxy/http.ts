/**
 * The two ends of a proxied call on node:http: the client's body read with
 * a bound, and a fetch `Response` written back chunk by chunk as it comes
 * (an SSE answer reaches the client while it is being recorded).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
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
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
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
