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
export {
  assertToolManifest,
  isToolKind,
  TOOL_IDENTITY_DOMAIN_V1,
  TOOL_IDENTITY_DOMAIN_V2,
  TOOL_IDENTITY_VERSION,
  TOOL_METHODS,
  type ToolInvocationRequest,
  type ToolManifest,
  type ToolManifestV1,
  type ToolManifestV2,
  type ToolMethod,
  toolIdentity,
  toolIdentityV1,
  toolManifest,
  toolManifestBytes,
  toolManifestIdentity,
  toolManifestV1,
  toolRecipeVersion,
} from "./tool-manifest.js";
