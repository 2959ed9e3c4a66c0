export { diffJson, type ValueDiff } from "../json/index.js";
export {
  DivergenceError,
  type EntrySizes,
  EntryTooLargeError,
  type MissDetails,
  type NearestEntry,
  ReplayMissError,
  StaleEntryError,
  ToolCallError,
  ToolDivergenceError,
  ToolResultError,
  UnknownInvocationError,
} from "./errors.js";
export type { Listener, RecorderEvents } from "./events.js";
export {
  type InvocationKind,
  type KindModes,
  type ResolvedModes,
  resolveKindModes,
} from "./kind-modes.js";
export { answerLive, Live } from "./live.js";
export {
  appendMiss,
  MISS_LOG_LIMIT,
  type MissRecord,
  missLogPath,
  recorderMissLog,
} from "./miss-log.js";
export { MODES, type Mode, resolveMode } from "./mode.js";
export { isRecordedStream } from "./recorded-stream.js";
export { createRecorder } from "./recorder.js";
export { replayWait, resolveReplaySpeed } from "./replay-speed.js";
export {
  RUN_DOMAIN_V1,
  type RunInfo,
  runContentHash,
  type ServedCall,
  type ServedStep,
} from "./run-scope.js";
export { streamCall } from "./stream-call.js";
export { checkToolPolicy, isCacheSafe, type ToolEffects, type ToolPolicy } from "./tool-policy.js";
export type {
  CallOptions,
  LiveStreamResult,
  RecordedStream,
  Recorder,
  RecorderIdentityDefaults,
  RecorderOptions,
  RecorderStats,
  ServedInfo,
  StreamOpened,
  StreamOptions,
  StreamResult,
  StreamStart,
} from "./types.js";
