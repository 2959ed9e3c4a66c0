/**
 * What the CLI shows in its "model" column: the model of a model call, or
 * `tool <server>/<name>` for a tool call (docs/tools.md), whose manifest has
 * no model.
 */
import type { Manifest } from "../identity/manifest-types.js";
import type { ToolManifest } from "../identity/tool-manifest.js";

export function modelLabel(manifest: Manifest | ToolManifest): string {
  if ((manifest as { kind?: unknown }).kind === "tool") {
    const t = manifest as ToolManifest;
    return `tool ${t.server ? `${t.server}/` : ""}${t.name}`;
  }
  return (manifest as Manifest).model;
}
