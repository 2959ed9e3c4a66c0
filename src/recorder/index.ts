export {
  DivergenceError,
  type EntrySizes,
  EntryTooLargeError,
  type MissDetails,
  type NearestEntry,
  ReplayMissError,
  UnknownInvocationError,
} from "./errors.js";
export type { Listener, RecorderEvents } from "./events.js";
export { MODES, type Mode, resolveMode } from "./mode.js";
export {
  type CallOptions,
  createRecorder,
  type Recorder,
  type RecorderIdentityDefaults,
  type RecorderOptions,
  type RecorderStats,
  type ServedInfo,
} from "./recorder.js";
export { RUN_DOMAIN_V1, type RunInfo, runContentHash, type ServedCall } from "./run-scope.js";
export {
  isRecordedStream,
  type RecordedStream,
  type StreamOptions,
  type StreamResult,
  type StreamStart,
  streamCall,
} from "./stream.js";
