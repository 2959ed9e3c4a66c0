// OpenTelemetry spans and counters for the recorder's calls (an optional
// peer, loaded once something is registered with it). No package subpath
// points here: the root re-exports its public names. Other modules import
// observability through this file, never deeper. Re-exports only.
export {
  type CallEnd,
  type CallSpan,
  type CallStart,
  type CallTelemetry,
  createTelemetry,
  INSTRUMENTATION_NAME,
  type MeterProviderLike,
  type TelemetryOptions,
  type TracerProviderLike,
} from "./otel.js";
