/**
 * HAR 1.2 files (what Polly.js's fs persister writes as `recording.har`, and
 * what browsers export): `log.entries[]` of `request` (`method`, `url`,
 * `headers[]`, `postData.text`) and `response` (`status`, `statusText`,
 * `headers[]`, `content.text` with `encoding: "base64"` for bytes).
 */
import { type Exchange, headerPairs, type RecordedBody, type Translated } from "./exchange.js";

/** Is this parsed JSON a HAR log? */
export function isHar(doc: unknown): boolean {
  return Array.isArray((doc as { log?: { entries?: unknown } } | null)?.log?.entries);
}

/** The exchanges of a HAR log, in order. */
export function translateHar(doc: unknown): Translated {
  if (!isHar(doc)) throw new TypeError("not a HAR file: it has no `log.entries` list");
  const entries = (doc as { log: { entries: unknown[] } }).log.entries;
  const out: Translated = { exchanges: [], unreadable: [] };
  // Polly.js writes entries in the order requests completed and numbers them
  // with `_order`; HAR's own order is startedDateTime. Keep the file's order:
  // it is the order the requests were answered in.
  entries.forEach((entry, i) => {
    const where = `log.entries[${i}]`;
    const x = translateEntry(entry, where);
    if ("reason" in x) out.unreadable.push(x);
    else out.exchanges.push(x);
  });
  return out;
}

function translateEntry(
  entry: unknown,
  where: string,
): Exchange | { where: string; reason: string } {
  const req = (entry as { request?: Record<string, unknown> } | null)?.request;
  const res = (entry as { response?: Record<string, unknown> } | null)?.response;
  if (req == null || res == null)
    return { where, reason: "not an entry: no request or no response" };
  if (typeof req.method !== "string" || typeof req.url !== "string") {
    return { where, reason: "the request has no method or url" };
  }
  if (typeof res.status !== "number") return { where, reason: "the response has no status" };
  const post = req.postData as { text?: unknown; encoding?: unknown } | undefined;
  const requestBody = post === undefined ? undefined : textOf(post.text, post.encoding);
  const content = res.content as { text?: unknown; encoding?: unknown } | undefined;
  const responseBody = content === undefined ? "" : textOf(content.text, content.encoding);
  if (requestBody === null || responseBody === null) {
    return {
      where,
      reason: "a body is encoded in a way HAR import does not know (only text and base64)",
    };
  }
  return {
    where,
    request: {
      method: req.method,
      url: req.url,
      headers: headerPairs(req.headers),
      body: requestBody,
    },
    response: {
      status: res.status,
      ...(typeof res.statusText === "string" && res.statusText !== ""
        ? { statusText: res.statusText }
        : {}),
      headers: headerPairs(res.headers),
      body: responseBody ?? "",
    },
  };
}

/** HAR text, base64-decoded when it says so; null for another encoding. */
function textOf(text: unknown, encoding: unknown): RecordedBody | undefined | null {
  if (text === undefined || text === null) return undefined;
  if (typeof text !== "string") return null;
  if (encoding === undefined || encoding === null || encoding === "") return text;
  if (encoding === "base64") return new Uint8Array(Buffer.from(text, "base64"));
  return null;
}
