/**
 * The manifest of a model call: the exact pre-image of its identity (recipe
 * v1). Keys are listed here in JCS order (RFC 8785 sorts by UTF-16 code unit).
 * `Manifest`, the union of every kind's manifest, is in kinds.ts.
 */
export interface ModelManifest {
  /** Retry number of this step, integer >= 0. In the identity so a retry after a gate rejection is a new key (RELOOP). */
  attempt: number;
  /** Input artifact hashes, sorted by UTF-16 code unit, duplicates kept. */
  inputs: string[];
  /** Model name; null, undefined and "" all become "". */
  model: string;
  /** Other output-affecting settings; present only when non-empty. */
  params?: { [key: string]: ManifestValue };
  /** The normalized prompt. */
  prompt: string;
  /** Agent role (planner, builder, reviewer…). */
  role: string;
  /** The normalized task ("" when none). */
  task: string;
  /**
   * Never present: recipe v1 predates kinds, so a model manifest is the one
   * without a `kind` field (its bytes, and so every identity, stay as they
   * were). Declared so that `Manifest` is a union discriminated by `kind`.
   */
  kind?: undefined;
}

/** A JSON value allowed inside `params`. */
export type ManifestValue =
  | null
  | boolean
  | number
  | string
  | ManifestValue[]
  | { [key: string]: ManifestValue };
