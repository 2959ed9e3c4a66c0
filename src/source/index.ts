// Sources (`invocache/source` is not a subpath; the CLI, the viewer and the
// proxy import this index): where a store URL, a cassette file or a folder of
// cassettes is, and opening it. Re-exports only.

export { SourceError, type SourceProblemKind } from "./errors.js";
export { CASSETTE_FILE, cassetteFiles } from "./files.js";
export {
  type LocateOptions,
  locateSource,
  type SourceLocation,
  type SourceSpec,
} from "./locate.js";
export {
  folderCassettePath,
  type OpenSourceOptions,
  openFolderCassette,
  openSourceStore,
} from "./open.js";
