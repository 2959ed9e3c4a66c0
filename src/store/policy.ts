/**
 * Replay defaults a store carries for the recorder that uses it. A store
 * never applies them itself (it only keeps values); the recorder reads them
 * once, when it is created, for each of its own options left unset. This is
 * how a cassette's `maxAge`, `onStale` and secret options keep working while
 * the policy behind them lives in the recorder, for every store alike.
 */
import type { SecretOptions } from "../secrets/index.js";
import type { OnStale } from "./staleness.js";

/** Defaults for the recorder's options of the same names (its own options win). */
export interface StorePolicy {
  /** Default of `RecorderOptions.maxAge`. */
  readonly maxAge?: number | string;
  /** Default of `RecorderOptions.onStale`. */
  readonly onStale?: OnStale;
  /** Where the recorder's staleness warnings go. Default `process.emitWarning`. */
  readonly onWarning?: (message: string) => void;
  /** Default of `RecorderOptions.secrets` (how responses are redacted before they are written). */
  readonly secrets?: SecretOptions;
  /** Default of `RecorderOptions.restoreSecrets`. */
  readonly restoreSecrets?: boolean;
}
