/**
 * VCR cassettes (vcrpy's YAML, the format Ruby's VCR started): `interactions`
 * of `request` (`method`, `uri`, `headers`, `body`) and `response`
 * (`status: {code, message}` or httpx's `status_code`; `body: {string}` or
 * httpx's `content`; `headers`). A `!!binary` body is kept as bytes (often
 * the gzip the server sent); body.ts decodes it.
 */
import { parse } from "yaml";
import { type Exchange, headerPairs, type RecordedBody, type Translated } from "./exchange.js";

/** Does this text look like a VCR cassette? */
export function looksLikeVcr(text: string): boolean {
  return /^interactions:\s*$/m.test(text);
}

/** The exchanges of a VCR cassette, in order. */
export function translateVcr(text: string): Translated {
  // vcrpy writes with PyYAML: YAML 1.1, `!!binary` for bytes.
  const doc = parse(text, { schema: "yaml-1.1", uniqueKeys: false }) as unknown;
  const interactions = (doc as { interactions?: unknown } | null)?.interactions;
  if (!Array.isArray(interactions)) {
    throw new TypeError("not a VCR cassette: it has no `interactions` list");
  }
  const out: Translated = { exchanges: [], unreadable: [] };
  interactions.forEach((item: unknown, i) => {
    const where = `interactions[${i}]`;
    const x = translateInteraction(item, where);
    if ("reason" in x) out.unreadable.push(x);
    else out.exchanges.push(x);
  });
  return out;
}

function translateInteraction(
  item: unknown,
  where: string,
): Exchange | { where: string; reason: string } {
  const req = (item as { request?: Record<string, unknown> } | null)?.request;
  const res = (item as { response?: Record<string, unknown> } | null)?.response;
  if (req === undefined || res === undefined || req === null || res === null) {
    return { where, reason: "not an interaction: no request or no response" };
  }
  const method = req.method;
  const uri = req.uri;
  if (typeof method !== "string" || typeof uri !== "string") {
    return { where, reason: "the request has no method or uri" };
  }
  const status =
    typeof res.status_code === "number"
      ? res.status_code
      : (res.status as { code?: unknown } | undefined)?.code;
  if (typeof status !== "number") return { where, reason: "the response has no status code" };
  const message = (res.status as { message?: unknown } | undefined)?.message;
  const responseBody = bodyOf(res.content !== undefined ? res.content : res.body);
  if (responseBody === null) {
    return {
      where,
      reason:
        "the response body is in a shape VCR import does not know (expected `body: {string}` or `content`)",
    };
  }
  const requestBody = bodyOf(req.body);
  if (requestBody === null) {
    return { where, reason: "the request body is in a shape VCR import does not know" };
  }
  return {
    where,
    request: {
      method,
      url: uri,
      headers: headerPairs(req.headers),
      body: requestBody ?? undefined,
    },
    response: {
      status,
      ...(typeof message === "string" ? { statusText: message } : {}),
      headers: headerPairs(res.headers),
      body: responseBody ?? "",
    },
  };
}

/** A body as vcrpy keeps it: text, bytes, `{string: …}`, or none; null for an unknown shape. */
function bodyOf(value: unknown): RecordedBody | undefined | null {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string" || value instanceof Uint8Array) return value;
  if (typeof value === "object" && "string" in value)
    return bodyOf((value as { string: unknown }).string);
  return null;
}
