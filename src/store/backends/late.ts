/**
 * What a fenced write says when it reached the backend after the caller's
 * deadline (`notAfter`, backend.ts) and changed nothing: the caller was
 * already told the operation timed out, so it must never take effect later.
 */
export const LATE = "the request reached the server after its deadline and was not applied";
