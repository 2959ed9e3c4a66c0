/**
 * What the CLI shows in its "model" column: the model of a model call, or
 * `tool <server>/<name>` for a tool call (docs/tools.md), whose manifest has
 * no model: each kind's label in identity's kind table.
 */

import type { Manifest } from "../identity/index.js";
import { callKind } from "../identity/internal.js";

export function modelLabel(manifest: Manifest): string {
  return callKind(manifest).label(manifest);
}
