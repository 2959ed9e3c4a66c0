/**
 * Whether a `record`-mode call reads its entry before going upstream. Record
 * mode serves nothing it reads: the read (the "probe") is there only so a
 * fixture error (docs/recorder.md, "Store failures") is thrown before a paid
 * call, not after it. On a store that cannot raise one the probe finds
 * nothing to act on, and costs a whole read per recording (on SQLite a
 * statement compiled and run on the thread pool).
 *
 * Who can raise a fixture error on a read: a cassette (a `CassetteError`
 * when the file cannot be loaded) and the staleness view (a
 * `StaleEntryError` under `onStale: "error"`; its warnings under `warn`).
 * A store `openStore` opens from one of its own schemes is neither. A store
 * of any other kind (a cassette, a caller's own `Store`) is probed, as is
 * every store read through a staleness policy: what they may throw is not
 * known here.
 */
import { STORE_SCHEMES } from "../store/index.js";

/**
 * True when `record` mode reads the entry before each upstream call.
 *
 * @param url the URL of the store the recorder was given (`store.url`)
 * @param stalenessView whether the recorder reads through a staleness policy (`maxAge` set)
 * @example
 * probesBeforeRecord("sqlite:///app/.invocache/cache.sqlite", false) // false
 * probesBeforeRecord("cassette://cassettes/a.yaml", false) // true
 */
export function probesBeforeRecord(url: string, stalenessView: boolean): boolean {
  if (stalenessView) return true;
  return !STORE_SCHEMES.some((scheme) => url.startsWith(scheme));
}
