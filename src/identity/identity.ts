/**
 * Identity recipe v1 (docs/identity.md):
 *   sha256( "invocache/invocation/v1\n" ‖ WTF-8( JCS(manifest) ) ), lowercase hex.
 */
import { type CanonicalValue, canonicalJson, wtf8 } from "./canonical-json.js";
import { callKind, type Manifest } from "./kinds.js";
import { buildManifest, type IdentityOptions, type InvocationRequest } from "./manifest.js";
import { builtManifestIdentity, IDENTITY_DOMAIN_V1 } from "./model-identity.js";

export { IDENTITY_DOMAIN_V1 };
/** The recipe version this build computes. */
export const IDENTITY_VERSION = 1;

/** The exact bytes hashed for a manifest (domain tag excluded). */
export function manifestBytes(manifest: Manifest): Uint8Array {
  // cast: Manifest is an interface (no index signature) of JSON data, checked when built: canonical JSON takes it as is.
  return wtf8(canonicalJson(manifest as unknown as CanonicalValue));
}

/**
 * The identity of a manifest of any kind: what {@link invocationIdentity} (or
 * `toolIdentity`) returns for the request it came from, under its kind's
 * recipe and domain tag (kinds.ts). Used to re-check stored entries and stamps.
 */
export function manifestIdentity(manifest: Manifest): string {
  return callKind(manifest).identity(manifest);
}

/**
 * The stable identity of a model invocation: 64 lowercase hex characters.
 * Equal for requests that differ only in noise (paths under the given roots,
 * UUIDs, timestamps, whitespace, key order, artifact order, fields outside the
 * manifest); different for anything else, including the attempt number.
 *
 * @example
 * const id = invocationIdentity(
 *   { role: "builder", model: "gpt-5", prompt: "Build {project}/app", projectPath: "/work/x" },
 *   { attempt: 0, inputArtifactHashes: ["sha256:ab…"] },
 * );
 */
export function invocationIdentity(req: InvocationRequest, opts: IdentityOptions = {}): string {
  // A conversation's prompt (and a long prompt's normalized text) is not built: its escaped pieces are what is hashed.
  const { manifest, paramsText, pieces } = buildManifest(req, opts, true);
  return builtManifestIdentity(
    manifest,
    pieces?.escaped,
    paramsText,
    pieces?.wellFormed === true,
    pieces?.chained,
    pieces?.checkpoints !== false,
  );
}
