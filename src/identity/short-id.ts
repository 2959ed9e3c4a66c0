/**
 * Short ids and git-style prefix resolution. A prefix shorter than 8 hex
 * characters is refused (too easy to collide as a store grows); an ambiguous
 * prefix is an error listing the candidates, never a guess.
 */
import { AmbiguousIdError } from "../errors.js";
import { isIdentity, isIdentityPrefix } from "./schema.js";

/** Minimum length of a prefix accepted by {@link resolvePrefix}. */
export const MIN_PREFIX_LENGTH = 8;

/**
 * The 12-hex-character short form of an identity, for tables and messages.
 *
 * @example
 * shortId("3f2a9c0d1b7e44c2…") // "3f2a9c0d1b7e"
 */
export function shortId(id: string): string {
  if (!isIdentity(id)) {
    throw new TypeError(
      `id must be a 64-character lowercase hex identity, got ${JSON.stringify(String(id).slice(0, 70))}`,
    );
  }
  return id.slice(0, 12);
}

/**
 * Resolve a unique prefix (>= 8 hex characters, case-insensitive) among ids.
 * Throws `AmbiguousIdError` listing the candidates when several match, and
 * when none does.
 *
 * @example
 * resolvePrefix("3f2a9c0d", ids) // the one id starting with 3f2a9c0d
 */
export function resolvePrefix(prefix: string, ids: Iterable<string>): string {
  if (typeof prefix !== "string") throw new TypeError("prefix must be a string of hex characters");
  const p = prefix.toLowerCase();
  if (!isIdentityPrefix(p)) {
    throw new RangeError(
      `prefix ${JSON.stringify(prefix)} must be ${MIN_PREFIX_LENGTH} to 64 hex characters; use more of the id (e.g. its 12-character short id)`,
    );
  }
  const matches = new Set<string>();
  for (const id of ids) if (id.startsWith(p)) matches.add(id);
  if (matches.size === 1) return [...matches][0]!;
  const list = [...matches].sort();
  if (list.length === 0) {
    throw new AmbiguousIdError(
      prefix,
      [],
      `no identity starts with ${p}; list them with \`invocache ls\``,
    );
  }
  const shown = list
    .slice(0, 10)
    .map((id) => `  ${id}`)
    .join("\n");
  const more = list.length > 10 ? `\n  …and ${list.length - 10} more` : "";
  throw new AmbiguousIdError(
    prefix,
    list,
    `prefix ${p} is ambiguous: ${list.length} identities match:\n${shown}${more}\nuse a longer prefix`,
  );
}
