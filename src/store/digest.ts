/**
 * A value's digest: what a conditional delete (`Store.deleteIfUnchanged`)
 * compares, so that a caller who read a value can remove it later only if
 * nobody replaced it meanwhile, holding 64 characters instead of the value.
 */
import { canonicalJson, sha256Hex, wtf8 } from "../identity/index.js";
import type { JsonValue } from "../json/index.js";

const DIGEST = /^[0-9a-f]{64}$/;

/**
 * SHA-256 (lowercase hex) of the value's canonical JSON (RFC 8785, lone
 * surrogates kept as WTF-8): equal for equal JSON values whatever their key
 * order, so a value read back from any store (a cassette rebuilds an
 * entry's objects in its own field order) digests as it did when listed.
 *
 * @example
 * const digest = valueDigest(value); // value as store.list() yielded it
 * await store.deleteIfUnchanged?.(key, digest); // false if re-recorded meanwhile
 */
export function valueDigest(value: JsonValue): string {
  return sha256Hex(wtf8(canonicalJson(value)));
}

/**
 * Throw a TypeError naming `argName` unless `digest` is a {@link valueDigest}.
 *
 * @example
 * assertDigest(valueDigest(1), "digest") // ok
 */
export function assertDigest(digest: unknown, argName: string): asserts digest is string {
  if (typeof digest !== "string" || !DIGEST.test(digest)) {
    throw new TypeError(
      `${argName} must be a value digest (64 lowercase hex, from valueDigest(value)), got ${typeof digest === "string" ? JSON.stringify(digest.slice(0, 80)) : typeof digest}`,
    );
  }
}
