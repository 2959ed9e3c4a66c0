/**
 * `invocache prune --not-served-since DURATION`: which entries to drop
 * because no run served them in the window, read from the run records
 * (`../served-since.ts`). Kept apart from prune.ts: prune only asks
 * `drops(entry)`.
 */
import { parseMaxAge } from "../../cassette/index.js";
import { locateSource, SourceError } from "../../source/index.js";
import { UsageError } from "../errors.js";
import type { Io } from "../io.js";
import { servedSince, wasServed } from "../served-since.js";
import type { EntryRecord, SourceFlags } from "../source.js";

/** The decision of `--not-served-since` for one scan. */
export interface NotServedWindow {
  /** True for an entry recorded before the window that no run in the window served. */
  drops(r: EntryRecord): boolean;
  /** Print, once, the namespaces whose entries were kept for want of a run record. */
  warn(): void;
}

/**
 * Read the run records of the source once, before the scan.
 *
 * @throws UsageError for a duration that does not parse.
 */
export async function notServedWindow(
  flags: SourceFlags,
  io: Io,
  duration: string,
  now: number,
): Promise<NotServedWindow> {
  let ms: number;
  try {
    ms = parseMaxAge(duration);
  } catch {
    throw new UsageError(
      `--not-served-since must be a duration such as 30d, 12h, 45s; got ${JSON.stringify(duration)}`,
    );
  }
  const since = now - ms;
  let location: ReturnType<typeof locateSource>;
  try {
    location = locateSource({ store: flags.store, cassette: flags.cassette }, { cwd: io.cwd });
  } catch (error) {
    // openSource reports the same problem with the command's own wording.
    if (error instanceof SourceError) return { drops: () => false, warn() {} };
    throw error;
  }
  const window = await servedSince(location, flags.namespace, since);
  const unrun = new Map<string, number>();
  return {
    drops(r) {
      // A recording younger than the window has not had the window to be served.
      if (Date.parse(r.entry.meta.recordedAt) >= since) return false;
      // No run record in the window in this namespace: nothing says what was used.
      if (!window.namespaces.has(r.namespace)) {
        unrun.set(r.namespace, (unrun.get(r.namespace) ?? 0) + 1);
        return false;
      }
      return !wasServed(window, r);
    },
    warn() {
      for (const [ns, n] of unrun) {
        io.err(
          `${io.errStyle.yellow("warning:")} namespace ${JSON.stringify(ns)} has no run record that ended in the last ${duration}; its ${n} older ${n === 1 ? "entry was" : "entries were"} kept (--not-served-since reads the records of runs with an explicit runId)\n`,
        );
      }
    },
  };
}
