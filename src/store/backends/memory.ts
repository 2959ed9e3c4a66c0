/**
 * `memory://`: a keyv over a `Map`, private to one `openStore` call. Values are
 * kept as serialized text, so every read parses a fresh copy.
 */
import type { Backend, RawRow } from "../backend.js";
import { createKeyv } from "./keyv.js";

interface Lease {
  owner: string;
  expiresAt: number;
}

/**
 * A backend living in this process only; leases are exclusive within it.
 *
 * @example
 * const backend = await createMemoryBackend();
 */
export async function createMemoryBackend(): Promise<Backend> {
  const map = new Map<string, string>();
  const keyv = await createKeyv(map);
  const leases = new Map<string, Lease>();
  return {
    keyv,
    keyPrefix: "",
    async *listRaw(prefix: string): AsyncIterable<RawRow> {
      // Snapshot first: the caller may write to the store while iterating.
      const rows = [...map].filter(([key]) => key.startsWith(prefix));
      yield* rows;
    },
    async getRecord(key) {
      return map.get(key);
    },
    async deleteRecordIf(key, record) {
      // One synchronous step: nothing else runs between the compare and the delete.
      return map.get(key) === record && map.delete(key);
    },
    async acquireLease(key, owner, ttlMs) {
      const now = Date.now();
      const held = leases.get(key);
      if (held !== undefined && held.owner !== owner && held.expiresAt > now) return false;
      leases.set(key, { owner, expiresAt: now + ttlMs });
      return true;
    },
    async releaseLease(key, owner) {
      if (leases.get(key)?.owner === owner) leases.delete(key);
    },
    async close() {
      map.clear();
      leases.clear();
    },
  };
}
