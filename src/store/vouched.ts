/**
 * Hints (`GetOptions.expect`) made by invocache's own recorder: its `id` is
 * the identity the recorder computed of that very `manifest` (recorder.ts:
 * `spec.identity(manifest)`, the recipe `manifestIdentity` picks for it).
 *
 * A store that owes an entry's id check (the cassette: the stored manifest
 * must hash to the stored id) may pass it by finding the stored id and
 * manifest equal to a hint's. A hint from anyone else is only the caller's
 * word: such a pass holds for that read and is not remembered. A vouched
 * hint is a proof (equal JSON, equal canonical bytes, so the stored manifest
 * hashes to the hint's id, which is the stored id): the pass is remembered
 * like a hashed one, and the item's later reads compare nothing.
 *
 * A WeakSet, not a flag on the object: nothing outside invocache can make a
 * hint that passes for vouched (this module is not public API, internal.ts).
 */
const vouched = new WeakSet<object>();

/** Mark `expect` (an id and the manifest it was computed from, by the caller itself) as vouched for. */
export function vouch<T extends object>(expect: T): T {
  vouched.add(expect);
  return expect;
}

/** Whether `expect` was made by {@link vouch}. */
export function isVouched(expect: object | undefined): boolean {
  return expect !== undefined && vouched.has(expect);
}
