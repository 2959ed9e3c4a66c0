/**
 * The route-by-mode step (docs/recorder.md, "Modes" and "The call
 * pipeline"): what a call's mode does with it. A call is answered by the
 * mode of its kind (model or tool, kind-modes.ts).
 *
 * - passthrough: call upstream live; neither read nor write.
 * - record: call upstream and (re)write, sharing in-process identical calls.
 * - verify: call upstream and compare with the recording; write nothing.
 * - replay: serve the recording; a miss is a `ReplayMissError`.
 * - auto: serve the recording; record a miss under the cross-process lease.
 * - once: replay or auto, settled per recorder before a call gets here (once.ts).
 */
import type { Mode } from "./mode.js";

/** Where the pipeline sends a call. */
export type Route = "live" | "record" | "verify" | "lookup";

/**
 * The route of a call in `mode`.
 *
 * @example
 * routeOf("auto") // "lookup": serve the recording, record a miss
 */
export function routeOf(mode: Mode): Route {
  switch (mode) {
    case "passthrough":
      return "live";
    case "record":
      return "record";
    case "verify":
      return "verify";
    case "replay":
    case "auto":
    case "once": // never seen here: recorder.call settles it to replay or auto first (once.ts)
      return "lookup";
  }
}
