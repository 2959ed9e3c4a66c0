/**
 * A model manifest's identity computed the plain way, to hold the fast
 * paths to (pieces, small manifests, long prompts): SHA-256 of the domain
 * tag followed by the manifest's WTF-8 bytes, with node:crypto.
 */
import { createHash } from "node:crypto";
import { IDENTITY_DOMAIN_V1, manifestBytes } from "../../src/identity/identity.js";
import type { invocationManifest } from "../../src/identity/index.js";

export function plainIdentity(m: ReturnType<typeof invocationManifest>): string {
  return createHash("sha256")
    .update(new TextEncoder().encode(IDENTITY_DOMAIN_V1))
    .update(manifestBytes(m))
    .digest("hex");
}
