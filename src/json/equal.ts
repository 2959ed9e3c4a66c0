/**
 * Equality of JSON values as JSON sees them: key order ignored. A leaf.
 */
import type { JsonValue } from "./value.js";

/**
 * Deep equality of JSON values, key order ignored, `Object.is` on numbers
 * except that 0 and -0 are equal (JSON cannot tell them apart).
 *
 * @example
 * jsonEqual({ a: 1, b: [2] }, { b: [2], a: 1 }) // true
 */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k]!, b[k]!)) return false;
  }
  return true;
}
