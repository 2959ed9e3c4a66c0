/**
 * `memory://`: a keyv over a `Map`, private to one `openStore` call. Values are
 * kept as serialized text, so every read parses a fresh copy.
 */
import type { Backend, RawRow } from "../backend.js";
import { recordWithoutManifest } from "../hit-record.js";
import { createKeyv } from "./keyv.js";

/**
 * The record texts, and beside each the text a hit reads (the record
 * without the entry's manifest, `Store.getHit`), cut once when the record is
 * written instead of on every hit. Text, not parsed objects: every read
 * still parses a fresh copy nobody else holds, so a caller who changes what
 * it was given cannot change the store.
 */
class RecordMap extends Map<string, string> {
  readonly hits = new Map<string, string>();

  override set(key: string, record: string): this {
    super.set(key, record);
    // A text the scan does not follow keeps the whole record: the store cuts or parses it as before.
    this.hits.set(key, recordWithoutManifest(record) ?? record);
    return this;
  }

  override delete(key: string): boolean {
    this.hits.delete(key);
    return super.delete(key);
  }

  override clear(): void {
    this.hits.clear();
    super.clear();
  }
}

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
  const map = new RecordMap();
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
    async getHitRecord(key) {
      return map.hits.get(key);
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
