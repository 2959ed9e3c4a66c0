// Compatibility: the entry-age helpers live in src/store; the staleness policy in the recorder.
export { type OnStale, parseMaxAge } from "../store/index.js";
export { type BinaryValue, decodeBinary, encodeBinary, isBinaryValue } from "./binary.js";
export { CASSETTE_FORMAT, emitCassette } from "./emit.js";
export { type CassetteItem, DEFAULT_NAMESPACE, isEntryKey, parseEntryKey } from "./item.js";
export {
  type PruneReport,
  pruneCassette,
  type RedactReport,
  readCassette,
  redactCassette,
} from "./maintenance.js";
export { type CassetteSource, parseCassette } from "./parse.js";
export { rewriteCassette } from "./rewrite.js";
export {
  type CassetteOptions,
  type CassetteStore,
  type CassetteUsage,
  cassetteStore,
} from "./store.js";
