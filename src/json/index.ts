/** JSON values: the type, its checks, snapshots and equality (a leaf module). */
export { diffJson, formatDiffs, type ValueDiff } from "./diff.js";
export { jsonEqual } from "./equal.js";
export {
  assertJsonValue,
  cloneJsonValue,
  isPlainPrototype,
  type JsonValue,
  jsonSnapshot,
  setMember,
  toJsonValue,
} from "./value.js";
