/**
 * The lookup step (docs/recorder.md, "The call pipeline"): a hit (counted,
 * secrets restored if asked), a miss, or a store that is down (an error in
 * replay, a bypass otherwise). The result says which, so the pipeline never
 * has to remember it elsewhere. `hitFrom` also serves what a lease holder
 * recorded while this call waited (lease.ts hands the pipeline the value).
 */
import { restoreSecrets } from "../secrets/index.js";
import type { JsonValue } from "../store/index.js";
import { validateEntry } from "../store/index.js";
import { type EntryHit, validateEntryHit, vouch } from "../store/internal.js";
import { extractUsage, plausibleUsage } from "../usage/index.js";
import { countHit } from "./call-events.js";
import { type Answer, type CallContext, type Core, TRUSTED } from "./core.js";

/** What a lookup reads: the store, its fail-open reporting, the counters, `restoreSecrets`. */
export type LookupDeps = Pick<Core, "store" | "failOpen" | "stats" | "events" | "opts">;

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
export async function lookup(deps: LookupDeps, c: CallContext): Promise<Lookup> {
  // The manifest and id this call computed: a cassette settles its lazy id check by comparing
  // (GetOptions), and remembers it: the id is this recorder's hash of that manifest (vouched.ts).
  // A Manifest is JSON, but an interface type (no index signature): it is widened to JsonValue.
  const options = { expect: vouch({ id: c.id, manifest: c.manifest as unknown as JsonValue }) };
  const store = deps.store;
  if (store.getHit !== undefined) {
    const head = await read(deps, c, () => store.getHit!(c.key, options));
    if (head === undefined) return "miss";
    if (head === "store-down") return head;
    const entry = validateEntryHit(head, `${store.url} ${c.key}`, {
      id: c.id,
      attempt: c.manifest.attempt,
    });
    if (entry !== undefined) return hit(deps, c, entry);
  }
  const raw = await read(deps, c, () => store.get(c.key, options));
  if (raw === undefined) return "miss";
  if (raw === "store-down") return raw;
  return hitFrom(deps, c, raw);
}

/** One read of the store: its failure throws in replay, is reported and `store-down` otherwise. */
async function read(
  deps: LookupDeps,
  c: CallContext,
  reading: () => Promise<JsonValue | undefined>,
): Promise<JsonValue | undefined | "store-down"> {
  try {
    return await reading();
  } catch (error) {
    if (c.mode === "replay") throw error;
    deps.failOpen.storeFailed(
      `store ${deps.store.url} failed on read; calling upstream without the cache`,
      error,
      c.id,
    );
    return "store-down";
  }
}

/** A stored value read for this call: validated, counted as a hit, secrets restored if asked. */
export function hitFrom(deps: LookupDeps, c: CallContext, raw: JsonValue): Answer {
  return hit(deps, c, validateEntry(raw, `${deps.store.url} ${c.key}`, TRUSTED));
}

function hit(deps: LookupDeps, c: CallContext, entry: EntryHit): Answer {
  const meta = entry.meta;
  countHit(deps, c, meta.durationMs);
  const value =
    deps.opts.restoreSecrets === true
      ? restoreSecrets(entry.response, deps.opts.secrets === false ? {} : (deps.opts.secrets ?? {}))
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
