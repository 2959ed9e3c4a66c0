/**
 * The manifest schema in one place: its field names and the form of an
 * identity. Every reader (the store envelope, cassettes, provenance, the
 * CLI) takes them from here instead of spelling its own list or regex.
 */
import { assertJsonValue } from "../json/index.js";
import type { ModelManifest } from "./manifest-types.js";

/** Every field a v1 manifest may hold, in canonical (sorted) order. */
export const MANIFEST_FIELDS = [
  "attempt",
  "inputs",
  "model",
  "params",
  "prompt",
  "role",
  "task",
] as const;

/** A manifest field name. */
export type ManifestField = (typeof MANIFEST_FIELDS)[number];

/** The fields every v1 manifest has (`params` is present only when non-empty). */
export const REQUIRED_MANIFEST_FIELDS: readonly ManifestField[] = MANIFEST_FIELDS.filter(
  (f) => f !== "params",
);

const IDENTITY = /^[0-9a-f]{64}$/;

/**
 * Whether `s` has the form of an invocation identity: 64 lowercase hex
 * characters (a SHA-256). Says nothing about whether any manifest hashes to it.
 *
 * @example
 * isIdentity("a".repeat(64)) // true
 * isIdentity("A".repeat(64)) // false
 */
export function isIdentity(s: unknown): s is string {
  return typeof s === "string" && IDENTITY.test(s);
}

const PREFIX = /^[0-9a-fA-F]{8,64}$/;

/**
 * Whether `s` can name an identity by prefix: 8 to 64 hex characters, either
 * case (see `resolvePrefix`; shorter prefixes collide too easily).
 *
 * @example
 * isIdentityPrefix("3f2a9c0d") // true
 * isIdentityPrefix("plan.json") // false
 */
export function isIdentityPrefix(s: unknown): boolean {
  return typeof s === "string" && PREFIX.test(s);
}

/** Whether `k` is a field name of a v1 manifest. */
export function isManifestField(k: string): k is ManifestField {
  return (MANIFEST_FIELDS as readonly string[]).includes(k);
}

/** The first thing wrong with a would-be manifest: the field (when one is to blame) and why. */
export interface ManifestProblem {
  field?: string;
  why: string;
}

/**
 * The first problem that keeps `value` from being a v1 manifest, or
 * undefined when it is one. `deep: false` skips proving that `params` is
 * JSON, for values a Store returned (its contract guarantees it).
 *
 * @example
 * manifestProblem({ attempt: -1, inputs: [], model: "", prompt: "", role: "r", task: "" })
 * // { field: "attempt", why: "is not an integer >= 0" }
 */
export function manifestProblem(
  value: unknown,
  options: { deep?: boolean } = {},
): ManifestProblem | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { why: "is not an object" };
  }
  const m = value as Record<string, unknown>;
  for (const k of Object.keys(m)) {
    if (!isManifestField(k)) return { field: k, why: "is not a manifest field" };
  }
  if (!Number.isSafeInteger(m.attempt) || (m.attempt as number) < 0) {
    return { field: "attempt", why: "is not an integer >= 0" };
  }
  if (!Array.isArray(m.inputs) || m.inputs.some((x) => typeof x !== "string")) {
    return { field: "inputs", why: "is not a list of strings" };
  }
  for (const k of ["model", "prompt", "role", "task"] as const) {
    if (typeof m[k] !== "string") return { field: k, why: "is not a string" };
  }
  if ("params" in m) {
    const p = m.params;
    if (p === null || typeof p !== "object" || Array.isArray(p) || Object.keys(p).length === 0) {
      return { field: "params", why: "is present but not a non-empty object" };
    }
    if (options.deep ?? true) {
      try {
        assertJsonValue(p, "params");
      } catch (error) {
        return { field: "params", why: `is not JSON: ${(error as Error).message}` };
      }
    }
  }
  return undefined;
}

/**
 * Check that a value read back from a store, a cassette or a stamp is a v1
 * manifest; returns it typed. Unknown keys are an error: they would make the
 * recomputed identity differ silently.
 *
 * @throws TypeError naming `where` and the field.
 * @example
 * assertManifest(JSON.parse(text), "plan.json") // ModelManifest
 */
export function assertManifest(
  value: unknown,
  where: string,
  options: { deep?: boolean } = {},
): ModelManifest {
  const problem = manifestProblem(value, options);
  if (problem !== undefined) {
    const what =
      problem.field === undefined
        ? problem.why
        : !isManifestField(problem.field)
          ? `unknown field ${JSON.stringify(problem.field)}`
          : `${problem.field} ${problem.why}`;
    throw new TypeError(`${where} is not an invocache v1 manifest: ${what}`);
  }
  return value as ModelManifest;
}
