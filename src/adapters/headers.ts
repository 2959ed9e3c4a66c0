/**
 * Which response headers a recording keeps. An allowlist, not a denylist: a
 * header we do not know about (a session cookie, an account id, a signed
 * URL) is never written to a store. Request headers are never kept at all.
 */

/** Response headers kept exactly (lowercase names). */
export const SAFE_RESPONSE_HEADERS: readonly string[] = [
  "content-type",
  // Request ids: the OpenAI SDK reads x-request-id into `_request_id`, the
  // Anthropic SDK reads request-id; users quote them in bug reports.
  "x-request-id",
  "request-id",
  "openai-version",
  "openai-model",
];

/** Header name prefixes kept (rate-limit state, read by some callers via `withResponse()`). */
export const SAFE_RESPONSE_HEADER_PREFIXES: readonly string[] = [
  "x-ratelimit-",
  "anthropic-ratelimit-",
];

/**
 * The kept response headers, lowercase names, sorted (stable recordings).
 *
 * @example
 * safeResponseHeaders(new Headers({ "set-cookie": "s=1", "x-request-id": "req_1" })) // { "x-request-id": "req_1" }
 */
export function safeResponseHeaders(
  headers: Headers | Record<string, string | undefined> | undefined,
): Record<string, string> {
  if (headers === undefined) return {};
  const entries: [string, string][] =
    headers instanceof Headers
      ? [...headers.entries()]
      : Object.entries(headers).flatMap(([k, v]) =>
          typeof v === "string" ? [[k.toLowerCase(), v] as [string, string]] : [],
        );
  const out: Record<string, string> = {};
  for (const [name, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (isSafe(name)) out[name] = value;
  }
  return out;
}

function isSafe(name: string): boolean {
  return (
    SAFE_RESPONSE_HEADERS.includes(name) ||
    SAFE_RESPONSE_HEADER_PREFIXES.some((prefix) => name.startsWith(prefix))
  );
}
