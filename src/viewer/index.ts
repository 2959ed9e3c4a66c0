// The viewer's public surface (re-exports only): see docs/viewer.md.
export { type Catalog, type CatalogLocation, type CatalogOptions, openCatalog } from "./catalog.js";
export { type ExportOptions, type ExportSummary, exportReport, renderReport } from "./export.js";
export {
  appendMiss,
  logMisses,
  MISS_LOG_LIMIT,
  type MissRecord,
  missLogPath,
  readMissLog,
} from "./miss-log.js";
export {
  diffRuns,
  type RunDiff,
  type RunTrajectory,
  type StepSide,
  type StepWhy,
} from "./run-diff.js";
export { startViewer, type Viewer, type ViewerOptions } from "./server.js";
export { defaultStampRoot, StampIndex, type StampRef } from "./stamps.js";
