/**
 * Bodies of foreign recordings as createFetch would have received them: the
 * content encoding undone (gzip, deflate, brotli, as the wire sent it and
 * vcrpy's `!!binary` or a HAR's base64 kept it), the headers that describe the
 * wire form dropped, and a stream a tool stored under the wrong type given its
 * `text/event-stream` back. Anything that cannot be decoded exactly is a
 * reason to skip, never a guess.
 */
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { type Exchange, headerValue, type RecordedBody } from "./exchange.js";

/** Headers about the wire form of a body: meaningless once the body is decoded. */
const WIRE_HEADERS = new Set(["content-encoding", "content-length", "transfer-encoding"]);

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The decoded response body, or why it cannot be decoded. */
export function decodeResponseBody(
  response: Exchange["response"],
): { bytes: Uint8Array } | { problem: string } {
  return decodeBody(response.body, headerValue(response.headers, "content-encoding"));
}

/** The decoded request body (undefined for none), or why it cannot be decoded. */
export function decodeRequestBody(
  request: Exchange["request"],
): { bytes: Uint8Array | undefined } | { problem: string } {
  if (request.body === undefined) return { bytes: undefined };
  return decodeBody(request.body, headerValue(request.headers, "content-encoding"));
}

function decodeBody(
  body: RecordedBody,
  encoding: string | undefined,
): { bytes: Uint8Array } | { problem: string } {
  // Text is what the tool decoded already (vcrpy's httpx `content`, a HAR's
  // text): its Content-Encoding header describes the wire, not this string.
  if (typeof body === "string") return { bytes: new TextEncoder().encode(body) };
  const coding = (encoding ?? "").trim().toLowerCase();
  try {
    // gzip announces itself; some tools keep it without the header, others
    // keep the header over a body they already decoded.
    if (body[0] === 0x1f && body[1] === 0x8b) return { bytes: gunzipSync(body) };
    if (coding === "" || coding === "identity" || coding === "gzip") return { bytes: body };
    if (coding === "deflate") {
      try {
        return { bytes: inflateSync(body) };
      } catch {
        return { bytes: inflateRawSync(body) };
      }
    }
    if (coding === "br") return { bytes: brotliDecompressSync(body) };
  } catch (error) {
    return {
      problem: `the body is ${coding || "gzip"}-encoded and does not decode (${(error as Error).message})`,
    };
  }
  return {
    problem: `the body has content-encoding ${JSON.stringify(coding)}, which import does not decode`,
  };
}

/** `bytes` as strict UTF-8 text, or undefined. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The response createFetch's upstream hands back for a recorded answer: its
 * status and headers (wire headers dropped) over the decoded body. A body that
 * is not JSON but reads as server-sent events gets `text/event-stream`: old
 * OpenAI streams were sent (and so recorded) as `application/json`.
 */
export function upstreamResponse(response: Exchange["response"], bytes: Uint8Array): Response {
  const headers = new Headers();
  for (const [name, value] of response.headers) {
    if (WIRE_HEADERS.has(name.toLowerCase())) continue;
    try {
      headers.append(name, value);
    } catch {
      // A header Headers refuses (a bad name): it never reaches a recording anyway.
    }
  }
  const text = utf8Text(bytes);
  if (text !== undefined && !isEventStream(headers) && !isJson(text) && looksLikeSse(text)) {
    headers.set("content-type", "text/event-stream");
  }
  const status = response.status;
  // Response refuses a body on 204/304 and statuses outside 200–599.
  const init: ResponseInit = {
    status,
    headers,
    ...(response.statusText === undefined ? {} : { statusText: response.statusText }),
  };
  return new Response(status === 204 || status === 304 ? null : bytes, init);
}

function isEventStream(headers: Headers): boolean {
  return (headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Does the text start like a server-sent event stream (a `data:`/`event:`/`id:` field or a comment)? */
export function looksLikeSse(text: string): boolean {
  const first = text.split(/\r\n|\r|\n/).find((line) => line.trim() !== "");
  return first !== undefined && /^(data|event|id|retry)?:/.test(first.trimStart());
}
