/**
 * How every backend builds its keyv: no key prefixing (keys are ours, verbatim),
 * exact JSON serialization, and `throwOnErrors` so a failing adapter rejects
 * instead of answering `undefined`.
 */
import type { Deserialize, Keyv, KeyvStoreAdapter } from "keyv";
import { deserializeRecord, serializeRecord } from "../json.js";
import type { JsonValue } from "../types.js";

/**
 * A keyv over `adapter` configured the way `KeyvStore` relies on.
 *
 * @example
 * const keyv = await createKeyv(new Map());
 */
export async function createKeyv(
  adapter: KeyvStoreAdapter | Map<string, string>,
): Promise<Keyv<JsonValue>> {
  const { Keyv } = await import("keyv");
  const keyv = new Keyv<JsonValue>({
    store: adapter,
    // keyv's default namespace "keyv" would prefix keys ("keyv:k"), and its
    // iterator strips everything up to the first ":" even without one.
    useKeyPrefix: false,
    // Without this keyv swallows adapter errors in get() and answers
    // undefined: a backend outage would look like a cache miss.
    throwOnErrors: true,
    serialize: serializeRecord,
    deserialize: deserializeRecord as Deserialize,
  });
  // Adapters such as @keyv/redis prefix keys with the namespace keyv hands them.
  keyv.namespace = undefined;
  return keyv;
}

/**
 * Prepare a freshly built SQL adapter (pragmas, extra tables), then wrap it
 * in keyv. An adapter that cannot be prepared is disconnected before the
 * error goes on, never left holding a connection.
 *
 * @example
 * const keyv = await prepareKeyv(adapter, () => prepare(adapter.query));
 */
export async function prepareKeyv(
  adapter: KeyvStoreAdapter & { disconnect(): Promise<void> },
  prepare: () => Promise<void>,
): Promise<Keyv<JsonValue>> {
  try {
    await prepare();
  } catch (error) {
    await adapter.disconnect().catch(() => {});
    throw error;
  }
  return createKeyv(adapter);
}
