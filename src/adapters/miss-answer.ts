/**
 * How a replay miss is answered over HTTP, by `createFetch` and by the proxy
 * alike: a 404 in the provider's own error shape whose message is the whole
 * miss report. Thrown from `fetch`, a miss reads as "Connection error." in
 * the SDKs (the report hidden under `cause`) and is retried; answered as an
 * HTTP error, the SDK raises its own `NotFoundError` with the report as the
 * message and does not retry it (a 4xx other than 408/409/429, plus
 * `x-should-retry: false`, which the OpenAI and Anthropic SDKs read first).
 */
import type { JsonValue } from "../json/index.js";

/** The error shapes a miss is answered in. */
export type MissShape = "openai" | "anthropic" | "gemini";

/** The status of a miss answer: a 4xx no SDK retries (never 408, 409, 429 or 5xx). */
export const MISS_STATUS = 404;

/** Headers every miss answer carries (besides the JSON content type). */
export const MISS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-should-retry": "false",
  "x-invocache-miss": "1",
});

const GEMINI_PATH = /\/models\/[^/]+:[A-Za-z]+$|:(?:stream)?generatecontent$/i;
const ANTHROPIC_PATH = /\/v1\/(?:messages(?:\/count_tokens)?|complete)$/;

/**
 * The provider whose error shape fits a request: by host first
 * (`*.anthropic.com`, `*.googleapis.com`), then by path (an Anthropic
 * `/v1/messages`, a Gemini `models/<m>:<method>`), so a local server or an
 * aliased upstream gets its client's shape too. OpenAI-style otherwise (the
 * shape OpenAI-compatible servers share).
 */
export function missShapeFor(url: URL | string): MissShape {
  let u: URL;
  try {
    u = typeof url === "string" ? new URL(url) : url;
  } catch {
    return "openai";
  }
  const host = u.hostname.toLowerCase();
  if (host === "anthropic.com" || host.endsWith(".anthropic.com")) return "anthropic";
  if (host.endsWith(".googleapis.com")) return "gemini";
  if (GEMINI_PATH.test(u.pathname)) return "gemini";
  if (ANTHROPIC_PATH.test(u.pathname)) return "anthropic";
  return "openai";
}

/**
 * The JSON body of a miss answer in `shape`, with `message` where that
 * provider's SDK reads an error's message (Anthropic's SDK reads the top
 * level `message` first, so it is there too).
 *
 * @example
 * missErrorBody("gemini", report) // { error: { code: 404, message: report, status: "NOT_FOUND" } }
 */
export function missErrorBody(shape: MissShape, message: string): JsonValue {
  switch (shape) {
    case "anthropic":
      return { type: "error", error: { type: "not_found_error", message }, message };
    case "gemini":
      return { error: { code: MISS_STATUS, message, status: "NOT_FOUND" } };
    default:
      return {
        error: { message, type: "invocache_replay_miss", param: null, code: "replay_miss" },
      };
  }
}

/**
 * The HTTP answer to a replay miss of a request to `url`: status 404, the
 * miss headers, the body in the provider's shape. `message` is the miss
 * report (`ReplayMissError.message`, which never holds a credential: request
 * headers and secret query parameters are not part of an identity).
 *
 * @example
 * catch (e) { if (e instanceof ReplayMissError) return missResponse(url, e.message) }
 */
export function missResponse(url: URL | string, message: string): Response {
  return new Response(JSON.stringify(missErrorBody(missShapeFor(url), message)), {
    status: MISS_STATUS,
    statusText: "Not Found",
    headers: { "content-type": "application/json", ...MISS_HEADERS },
  });
}
