/**
 * Which entries of a cassette one handle read, wrote, or found stale, for
 * unused-entry reports and pruning (the vitest helper's `strict` and `prune`).
 * Bookkeeping only: nothing here changes what is read or written.
 */
import { isStale } from "../store/internal.js";
import { type CassetteItem, isEntryKey } from "./item.js";

/** Which entries of a cassette this handle used, for unused-entry reports and pruning. */
export interface CassetteUsage {
  /** Entry keys the file held that were read (replayed). */
  used: string[];
  /** Entry keys the file held that were neither read nor rewritten. */
  unused: string[];
  /** Entry keys written through this handle. */
  recorded: string[];
  /** Entry keys read that were older than the cassette's `maxAge` and not recorded again. */
  stale: string[];
}

export class UsageLog {
  /** Keys the file held when first loaded: what "unused" is measured against. */
  #initial: Set<string> | undefined;
  readonly #read = new Set<string>();
  readonly #written = new Set<string>();
  readonly #stale = new Set<string>();

  constructor(private readonly maxAgeMs: number | undefined) {}

  /** The file's keys as first seen (later loads change nothing). */
  loaded(keys: Iterable<string>): void {
    this.#initial ??= new Set(keys);
  }

  read(item: CassetteItem, now: number): void {
    this.#read.add(item.key);
    if (
      this.maxAgeMs !== undefined &&
      isEntryKey(item.key) &&
      isStale(item.value, this.maxAgeMs, now)
    ) {
      this.#stale.add(item.key);
    }
  }

  written(key: string): void {
    this.#written.add(key);
  }

  /** A write that failed or a delete: the key no longer counts as recorded by this handle. */
  unwritten(key: string): void {
    this.#written.delete(key);
  }

  /** The report; `live` says whether a key still holds a live item. */
  report(live: (key: string) => boolean): CassetteUsage {
    const inFile = [...(this.#initial ?? [])].filter(isEntryKey);
    const entries = (keys: Iterable<string>) => [...keys].filter(isEntryKey);
    return {
      used: inFile.filter((k) => this.#read.has(k)),
      unused: inFile.filter((k) => !this.#read.has(k) && !this.#written.has(k) && live(k)),
      recorded: entries(this.#written),
      stale: entries(this.#stale).filter((k) => !this.#written.has(k)),
    };
  }
}
