/**
 * What the CLI shows in its "model" column: the model of a model call, or
 * `tool <server>/<name>` for a tool call (docs/tools.md), whose manifest has
 * no model.
 */

import type { Manifest, ToolManifest } from "../identity/index.js";
import { explainIdentity, type FieldDiff } from "../identity/index.js";
import { diffJson } from "../recorder/index.js";
import type { StoredMeta } from "../store/index.js";

export function modelLabel(manifest: Manifest | ToolManifest): string {
  if ((manifest as { kind?: unknown }).kind === "tool") {
    const t = manifest as ToolManifest;
    // Recipe tool v1 (arguments normalized like a prompt) is read, never served for a new call.
    const kind = (t as { version?: unknown }).version === 2 ? "tool" : "tool(v1, re-record)";
    return `${kind} ${t.server ? `${t.server}/` : ""}${t.name}`;
  }
  return (manifest as Manifest).model;
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

/**
 * Field diffs of two manifests of any kind: `explainIdentity` for two model
 * calls; for a tool call (whose fields differ from a model call's), every
 * differing path of the manifests, e.g. `args.q: "a" → "b"`.
 */
export function explainAny(a: Manifest, b: Manifest): FieldDiff[] {
  const isTool = (m: Manifest) => (m as { kind?: unknown }).kind === "tool";
  if (!isTool(a) && !isTool(b)) return explainIdentity(a, b);
  return diffJson(a, b).map((d) => {
    const path = d.path.replace(/^\$\.?/, "");
    const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));
    return {
      field: path.split(/[.[]/)[0] as FieldDiff["field"],
      summary: `${path}: ${show(d.expected)} → ${show(d.actual)}`,
    };
  });
}
