// Importing recordings made by other tools (VCR/vcrpy, HAR/Polly.js,
// nock.back, aimock) into a store or cassette. Re-exports only.
export { IMPORT_FORMATS, type ImportFormat } from "./exchange.js";
export {
  type ImportFile,
  type ImportItem,
  type ImportOptions,
  type ImportOutcome,
  type ImportReport,
  importFiles,
} from "./importer.js";
export { checkImportFormat, ImportFileError, readImportFile } from "./read.js";
