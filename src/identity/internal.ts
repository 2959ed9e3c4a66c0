/**
 * Identity's face for the other modules of invocache, not for users: the
 * kind table (kinds.ts) the recorder, the stores, the CLI and the viewer
 * dispatch through, and the tool recipe's functions they need. No package
 * subpath points here, so none of it is public API (the API reports cover
 * index.ts only); other modules import identity through index.ts or this
 * file, never deeper (.dependency-cruiser.cjs).
 */
export {
  asModelManifest,
  asToolManifest,
  CALL_KINDS,
  type CallKind,
  type CallKindSpec,
  type CallRequest,
  callKind,
  callKindNamed,
  kindOf,
} from "./kinds.js";
