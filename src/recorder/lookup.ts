/**
 * Looking a call up: a hit (counted, secrets restored if asked), a miss, or
 * a store that is down (an error in replay, a bypass otherwise). The result
 * says which, so the caller never has to remember it elsewhere.
 */
import { restoreSecrets } from "../secrets/index.js";
import type { JsonValue } from "../store/index.js";
import { validateEntry } from "../store/index.js";
import { type EntryHit, validateEntryHit } from "../store/internal.js";
import { extractUsage, plausibleUsage } from "../usage/index.js";
import { type Answer, type CallContext, type Core, TRUSTED } from "./core.js";

/** What answered a lookup: the hit's answer, or why there was none (no object is made for those). */
export type Lookup =
  | Answer
  | "miss"
  /** The store failed on read (already reported): call upstream without the cache. */
  | "store-down";

/**
 * Read the call's entry. A store failure throws in replay, is reported and `store-down` otherwise.
 *
 * A store with `getHit` is read without the entry's manifest (the whole
 * conversation on an agent loop; the hit serves only the response): the
 * entry's id and attempt must then be the call's (`validateEntryHit`),
 * else the whole entry is read and checked as before.
 */
export async function lookup(core: Core, c: CallContext): Promise<Lookup> {
  // The manifest and id this call computed: a cassette settles its lazy id check by comparing (GetOptions).
  const options = { expect: { id: c.id, manifest: c.manifest as unknown as JsonValue } };
  const store = core.store;
  if (store.getHit !== undefined) {
    const head = await read(core, c, () => store.getHit!(c.key, options));
    if (head === undefined) return "miss";
    if (head === "store-down") return head;
    const entry = validateEntryHit(head, `${store.url} ${c.key}`, {
      id: c.id,
      attempt: c.manifest.attempt,
    });
    if (entry !== undefined) return hit(core, c, entry);
  }
  const raw = await read(core, c, () => store.get(c.key, options));
  if (raw === undefined) return "miss";
  if (raw === "store-down") return raw;
  return hitFrom(core, c, raw);
}

/** One read of the store: its failure throws in replay, is reported and `store-down` otherwise. */
async function read(
  core: Core,
  c: CallContext,
  reading: () => Promise<JsonValue | undefined>,
): Promise<JsonValue | undefined | "store-down"> {
  try {
    return await reading();
  } catch (error) {
    if (c.mode === "replay") throw error;
    core.failOpen.storeFailed(
      `store ${core.store.url} failed on read; calling upstream without the cache`,
      error,
      c.id,
    );
    return "store-down";
  }
}

/** A stored value read for this call: validated, counted as a hit, secrets restored if asked. */
export function hitFrom(core: Core, c: CallContext, raw: JsonValue): Answer {
  return hit(core, c, validateEntry(raw, `${core.store.url} ${c.key}`, TRUSTED));
}

function hit(core: Core, c: CallContext, entry: EntryHit): Answer {
  const meta = entry.meta;
  countHit(core, c, meta.durationMs);
  const value =
    core.opts.restoreSecrets === true
      ? restoreSecrets(entry.response, core.opts.secrets === false ? {} : (core.opts.secrets ?? {}))
          .value
      : entry.response;
  // The tokens the recording cost: stored with it, or read from an older recording.
  // A stored count above the bound (recorded before it existed) is not counted.
  const usage =
    meta.usage === undefined ? extractUsage(entry.response) : plausibleUsage(meta.usage);
  const verdict = meta.verdict?.verdict;
  const answer: Answer = { value, hit: true, durationMs: meta.durationMs };
  if (usage !== undefined) answer.usage = usage;
  if (verdict !== undefined) answer.verdict = verdict;
  return answer;
}

/** A hit's event and saved time; `stats.hits` is counted with the call's accounts (accounting.ts). */
export function countHit(core: Core, c: CallContext, savedMs: number): void {
  core.stats.savedMs += savedMs;
  if (core.events.listening("hit"))
    core.events.emit("hit", { id: c.id, occurrence: c.occurrence, key: c.key, savedMs });
}

/** A miss's event; `stats.misses` is counted with the call's accounts (accounting.ts). */
export function countMiss(core: Core, c: CallContext): void {
  c.facts.missed = true;
  core.events.emit("miss", {
    id: c.id,
    occurrence: c.occurrence,
    key: c.key,
    mode: c.mode,
    manifest: c.manifest,
  });
}

/** Count a bypass (the call went upstream without reading or writing). */
export function countBypass(core: Core, c: CallContext, reason: string): void {
  core.stats.bypassed++;
  core.events.emit("bypass", { id: c.id, occurrence: c.occurrence, reason });
}
