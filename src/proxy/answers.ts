/**
 * The proxy's own answers (a miss, a refused request, a store that failed)
 * in the error shape of the provider the client talks to, so its SDK raises
 * its usual error class with our message in it (`openai.NotFoundError`,
 * `anthropic.NotFoundError`…).
 */

/** Whose error shape a client expects. */
export type ProviderShape = "openai" | "anthropic" | "gemini";

/**
 * The shape for a call: by upstream name, else by the upstream's host or
 * the path's form; anything else is OpenAI-compatible.
 *
 * @example
 * providerShape("local", new URL("http://127.0.0.1/v1/messages")) // "anthropic"
 */
export function providerShape(upstream: string, url: URL | undefined): ProviderShape {
  if (upstream === "anthropic" || url?.hostname === "api.anthropic.com") return "anthropic";
  if (upstream === "gemini" || url?.hostname === "generativelanguage.googleapis.com")
    return "gemini";
  if (url !== undefined && /\/messages$/.test(url.pathname)) return "anthropic";
  if (url !== undefined && /:(stream)?generateContent$/i.test(url.pathname)) return "gemini";
  return "openai";
}

const GEMINI_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  404: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
};

const ANTHROPIC_TYPE: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  409: "invalid_request_error",
  413: "request_too_large",
  500: "api_error",
  502: "api_error",
  503: "overloaded_error",
};

/**
 * An error body in `shape`. `type` is invocache's own code (OpenAI's `type`
 * and `code` carry it); Anthropic and Gemini get their type for `status`.
 *
 * @example
 * errorBody("openai", 404, "invocache_replay_miss", "replay miss …", "replay_miss")
 */
export function errorBody(
  shape: ProviderShape,
  status: number,
  type: string,
  message: string,
  code: string | null = null,
): Record<string, unknown> {
  if (shape === "anthropic") {
    return {
      type: "error",
      error: { type: ANTHROPIC_TYPE[status] ?? "api_error", message },
      message,
    };
  }
  if (shape === "gemini") {
    return { error: { code: status, message, status: GEMINI_STATUS[status] ?? "UNKNOWN" } };
  }
  return { error: { message, type, param: null, code } };
}
