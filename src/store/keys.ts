/**
 * The one rule for store keys, applied by every store so that a key that
 * works on one backend works on all of them.
 */

/**
 * Longest key, in UTF-16 code units. Postgres keeps keys in a `VARCHAR(512)`
 * primary key, and 512 characters of at most 4 UTF-8 bytes each stay under
 * the 2,704-byte btree row limit. Recorder keys are about 80 characters.
 */
export const MAX_KEY_LENGTH = 512;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Throw unless `key` is a usable store key: a non-empty string of at most
 * {@link MAX_KEY_LENGTH} code units, well-formed UTF-16, without U+0000.
 *
 * Why: SQLite and Redis receive keys as UTF-8, where a lone surrogate becomes
 * U+FFFD, so `"a\uD800"` and `"a\uDBFF"` would silently share one row;
 * Postgres `text` cannot hold U+0000 at all. Refusing such keys everywhere is
 * the only way to keep "different key, different entry" true on all stores.
 * (Values have no such limit; see `assertJsonValue`.)
 *
 * @example
 * assertStoreKey("ns:e:3f2a…:0", "key") // ok
 * assertStoreKey("a\uD800", "key") // TypeError: key contains a lone surrogate…
 */
export function assertStoreKey(key: unknown, argName: string): asserts key is string {
  if (typeof key !== "string") {
    throw new TypeError(`${argName} must be a string, got ${key === null ? "null" : typeof key}`);
  }
  if (key.length === 0) throw new TypeError(`${argName} must not be empty`);
  if (key.length > MAX_KEY_LENGTH) {
    throw new RangeError(
      `${argName} is ${key.length} UTF-16 code units long; store keys are at most ${MAX_KEY_LENGTH}`,
    );
  }
  if (key.includes("\u0000"))
    throw new TypeError(`${argName} contains U+0000, which Postgres cannot store`);
  if (LONE_SURROGATE.test(key)) {
    throw new TypeError(
      `${argName} contains a lone surrogate; store keys must be well-formed Unicode (backends store them as UTF-8)`,
    );
  }
}

/**
 * Throw unless `prefix` can be passed to `list`: like a key, but may be empty.
 *
 * @example
 * assertKeyPrefix("", "prefix") // ok: lists everything
 */
export function assertKeyPrefix(prefix: unknown, argName: string): asserts prefix is string {
  if (prefix === "") return;
  assertStoreKey(prefix, argName);
}

/**
 * Throw unless `ms` is a positive safe integer number of milliseconds.
 * Zero is refused because keyv reads a ttl of 0 as "forever".
 *
 * @example
 * assertTtl(1000, "ttlMs") // ok
 */
export function assertTtl(ms: unknown, argName: string): asserts ms is number {
  if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms < 1) {
    throw new RangeError(
      `${argName} must be a positive integer number of milliseconds, got ${String(ms)}`,
    );
  }
}
