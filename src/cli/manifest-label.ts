/**
 * What the CLI shows in its "model" column: the model of a model call, or
 * `tool <server>/<name>` for a tool call (docs/tools.md), whose manifest has
 * no model: each kind's label in identity's kind table.
 */

import type { Manifest } from "../identity/index.js";
import { callKind } from "../identity/internal.js";
import type { StoredMeta } from "../store/index.js";

export function modelLabel(manifest: Manifest): string {
  return callKind(manifest).label(manifest);
}

/**
 * `modelLabel` from an entry's stored metadata (`StoredMeta`), without its manifest.
 *
 * @example
 * metaModelLabel({ model: "gpt-4o" }) // "gpt-4o"
 */
export function metaModelLabel(meta: Pick<StoredMeta, "model" | "tool">): string {
  const t = meta.tool;
  if (t === undefined) return meta.model ?? "";
  const kind = t.version === 2 ? "tool" : "tool(v1, re-record)";
  return `${kind} ${t.server ? `${t.server}/` : ""}${t.name}`;
}
