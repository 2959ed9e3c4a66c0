/**
 * Which entries runs served lately, from the run records alone
 * (`<namespace>:run:<runId>`, src/recorder/run-records.ts): each record
 * lists every call of its run (`calls`, `<id>:<occurrence>`) and how it was
 * answered (`served`: hit, recorded, live), and when the run ended
 * (`endedAt`). What `invocache prune --not-served-since` keeps. Nothing is
 * written on the hit path for it: a run writes its record once, when it ends.
 */

import { readCassette } from "../cassette/index.js";
import type { JsonValue } from "../json/index.js";
import { cassetteFiles, openSourceStore, type SourceLocation } from "../source/index.js";
import { parseRunKey } from "../store/index.js";
import type { EntryRecord } from "./source.js";

/** What the run records of a source say about the window. */
export interface ServedWindow {
  /** `<namespace>:<id>:<occurrence>` of every entry a run that ended in the window served from the store. */
  served: Set<string>;
  /** Namespaces with at least one run record that ended in the window. */
  namespaces: Set<string>;
  /** Run records that ended in the window. */
  runs: number;
}

/**
 * Read the run records of `location` (a store, or a cassette file or
 * folder), keeping those that ended at or after `since` (epoch ms).
 */
export async function servedSince(
  location: SourceLocation,
  namespace: string | undefined,
  since: number,
): Promise<ServedWindow> {
  const out: ServedWindow = { served: new Set(), namespaces: new Set(), runs: 0 };
  const take = (key: string, value: JsonValue) => {
    const parts = parseRunKey(key);
    if (parts === undefined) return;
    if (namespace !== undefined && parts.namespace !== namespace) return;
    const record = value as { calls?: unknown; served?: unknown; endedAt?: unknown };
    const ended = typeof record.endedAt === "string" ? Date.parse(record.endedAt) : Number.NaN;
    if (!(ended >= since) || !Array.isArray(record.calls)) return;
    out.runs++;
    out.namespaces.add(parts.namespace);
    const served = Array.isArray(record.served) ? record.served : [];
    record.calls.forEach((call, i) => {
      // "live": called and not stored, so no entry was used. A record without
      // `served` (none is written so) counts every call.
      const how = served[i];
      if (typeof call !== "string" || how === "live" || how === "failed") return;
      out.served.add(`${parts.namespace}:${call}`);
    });
  };
  if (location.kind === "cassette") {
    const files = location.folder ? cassetteFiles(location.path) : [location.path];
    for (const file of files) {
      for (const item of await readCassette(file)) take(item.key, item.value);
    }
    return out;
  }
  if (!location.exists) return out;
  const store = openSourceStore(location, { readOnly: true });
  try {
    const prefix = namespace === undefined ? "" : `${namespace}:run:`;
    for await (const [key, value] of store.list(prefix)) take(key, value);
  } finally {
    await store.close();
  }
  return out;
}

/** Whether the window's runs served `r`. */
export function wasServed(window: ServedWindow, r: EntryRecord): boolean {
  return window.served.has(`${r.namespace}:${r.id}:${r.occurrence}`);
}
