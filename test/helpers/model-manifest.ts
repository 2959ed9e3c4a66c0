/**
 * `Manifest` is a union discriminated by kind (src/identity/kinds.ts): a test
 * that reads a model call's prompt, model or params narrows to the model
 * manifest first, and fails plainly when it got another kind.
 */
import type { Manifest, ModelManifest } from "../../src/identity/index.js";

export function modelOf(m: Manifest | undefined): ModelManifest {
  if (m === undefined) throw new Error("no manifest");
  if (m.kind !== undefined) throw new Error(`expected a model manifest, got kind ${m.kind}`);
  return m;
}
