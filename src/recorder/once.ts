/**
 * The `once` mode, as VCR and Polly.js users know it: when the store already
 * holds recordings of this namespace (the cassette exists), replay only;
 * otherwise record what is missing (`auto`). Decided at the first call and
 * kept for the recorder's life, so a test that starts on an empty cassette
 * records every one of its calls, not just the first.
 */
import { entryPrefix, type Store } from "../store/index.js";
import type { Mode } from "./mode.js";

/** What `once` becomes for one recorder. */
export type OnceAs = "replay" | "auto";

/**
 * `replay` when `store` has an entry in `namespace`, else `auto`. A store
 * that cannot be read is thrown: which of the two was meant cannot be told.
 *
 * @example
 * await onceAs(cassetteStore("cassettes/new.yaml"), "default") // "auto" (no file yet)
 */
export async function onceAs(store: Store, namespace: string): Promise<OnceAs> {
  for await (const _ of store.list(entryPrefix(namespace))) return "replay";
  return "auto";
}

/** `mode` with `once` replaced by what it became (`as`). */
export function settled(mode: Mode, as: OnceAs): Mode {
  return mode === "once" ? as : mode;
}
