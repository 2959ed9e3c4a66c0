/**
 * Opt-in recording of chosen HTTP error answers (issue 13): a test of retry
 * logic must replay the 429 before the 200. Never by default; only the
 * statuses asked for; only complete JSON (or empty) bodies; never a network
 * failure (there is no answer to record) and never a truncated stream (the
 * completeness checks still apply to 2xx answers).
 */

/** Headers kept on a recorded error answer besides the usual allowlist: what retry logic reads. */
export const RETRY_HEADERS: readonly string[] = ["retry-after", "retry-after-ms"];

/**
 * Check the `recordErrors` option of createFetch: HTTP error statuses
 * (400-599), e.g. `[429, 500, 503]`. Returns them as a set.
 */
export function checkRecordErrors(value: unknown): ReadonlySet<number> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value)) {
    throw new TypeError(
      "createFetch: recordErrors must be an array of HTTP error statuses, e.g. [429, 500]",
    );
  }
  for (const s of value) {
    if (!Number.isInteger(s) || s < 400 || s > 599) {
      throw new TypeError(
        `createFetch: recordErrors must list HTTP error statuses 400-599, got ${JSON.stringify(s)}`,
      );
    }
  }
  return new Set(value as number[]);
}

/** The retry headers of a live error answer, lowercase. */
export function retryHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RETRY_HEADERS) {
    const v = headers.get(name);
    if (v !== null) out[name] = v;
  }
  return out;
}
