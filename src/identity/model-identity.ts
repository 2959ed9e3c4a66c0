/**
 * The hash of a model manifest, recipe v1 (docs/identity.md):
 *   sha256( "invocache/invocation/v1\n" ‖ WTF-8( JCS(manifest) ) ), lowercase hex.
 * The model entry of the kind table (kinds.ts) hashes through it.
 */
import { type CanonicalValue, writeCanonicalJson, wtf8 } from "./canonical-json.js";
import type { ModelManifest } from "./manifest-types.js";
import { createSha256, type Sha256, sha256HexOfText } from "./sha256.js";

/** Domain tag of recipe v1: no other invocache digest starts with these bytes. */
export const IDENTITY_DOMAIN_V1 = "invocache/invocation/v1\n";

/** The identity of a model manifest (recipe v1). */
export function modelManifestIdentity(manifest: ModelManifest): string {
  // Hash the canonical text piece by piece: the same bytes as
  // manifestBytes(manifest), without ever building a copy of a large prompt
  // (docs/performance.md, "Identity core"). Well-formed pieces go in as text
  // (their UTF-8 is their WTF-8); a piece with a lone surrogate as WTF-8. The
  // ASCII domain tag rides on the first piece: one hash update fewer.
  // Most manifests are one piece (under 8 K code units): that one is held
  // and hashed in one call (sha256HexOfText), with no incremental hash
  // object; a second piece starts one.
  let held: string | undefined;
  let h: Sha256 | undefined;
  let first = true;
  writeCanonicalJson(manifest as unknown as CanonicalValue, (piece, wellFormed) => {
    const text = first ? IDENTITY_DOMAIN_V1 + piece : piece;
    const isFirst = first;
    first = false;
    if (isFirst && wellFormed) {
      held = text;
      return;
    }
    if (h === undefined) {
      h = createSha256();
      if (held !== undefined) h.update(held);
      held = undefined;
    }
    h.update(wellFormed ? text : wtf8(text));
  });
  if (h !== undefined) return h.hex();
  return sha256HexOfText(held ?? IDENTITY_DOMAIN_V1);
}
