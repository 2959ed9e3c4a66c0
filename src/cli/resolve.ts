/**
 * git-style prefix resolution over a source's entries: a unique prefix of 8
 * or more hex characters names one identity; an ambiguous one is an error
 * that lists the candidates; a short or non-hex one is a usage error.
 */
import { AmbiguousIdError } from "../errors.js";
import { isIdentityPrefix, resolvePrefix } from "../identity/index.js";
import { callKind } from "../identity/internal.js";
import { CliError, UsageError } from "./errors.js";
import { shortTime } from "./format.js";
import type { EntryRecord, EntrySource } from "./source.js";

/**
 * Whether `arg` could be an id prefix (hex, 8 to 64 characters).
 *
 * @example
 * looksLikePrefix("3f2a9c0d") // true
 * looksLikePrefix("plan.json") // false
 */
export function looksLikePrefix(arg: string): boolean {
  return isIdentityPrefix(arg);
}

/**
 * The identity `prefix` names among `entries`, and all its entries (every
 * namespace and occurrence), sorted by namespace then occurrence.
 *
 * @throws UsageError for a prefix that is too short or not hex;
 *   CliError `ERR_ID_NOT_FOUND` / `ERR_ID_AMBIGUOUS` (exit 1), the latter
 *   with the candidates as detail lines and in `data.candidates`.
 * @example
 * const { id, records } = resolveEntries("3f2a9c0d", entries, source);
 */
export function resolveEntries(
  prefix: string,
  entries: readonly EntryRecord[],
  source: Pick<EntrySource, "url" | "exists" | "namespace">,
): { id: string; records: EntryRecord[] } {
  let id: string;
  try {
    id = resolvePrefix(
      prefix,
      entries.map((e) => e.id),
    );
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) {
      throw new UsageError(`${error.message.split("\n")[0]}; list ids with \`invocache ls\``);
    }
    if (error instanceof AmbiguousIdError) {
      const where = `${source.url}${source.namespace === undefined ? "" : ` (namespace ${source.namespace})`}`;
      if (error.candidates.length === 0) {
        throw new CliError(
          "ERR_ID_NOT_FOUND",
          source.exists
            ? `no entry in ${where} has an id starting with ${prefix.toLowerCase()}; list them with \`invocache ls\``
            : `no entry starts with ${prefix.toLowerCase()}: ${where} does not exist yet (nothing recorded here); pass --store or --cassette`,
          { data: { prefix, candidates: [] } },
        );
      }
      const details = error.candidates.map((candidate) => {
        const e = entries.find((r) => r.id === candidate);
        const m = e?.entry.manifest;
        return `  ${candidate.slice(0, 16)}  ${m?.role ?? ""}  ${m === undefined ? "" : (callKind(m).model(m) ?? "")}  attempt ${m?.attempt ?? "?"}  ${e ? shortTime(e.entry.meta.recordedAt) : ""}`.trimEnd();
      });
      throw new CliError(
        "ERR_ID_AMBIGUOUS",
        `prefix ${prefix.toLowerCase()} is ambiguous: ${error.candidates.length} ids in ${where} start with it; use a longer prefix. Candidates:`,
        { details, data: { prefix, candidates: error.candidates } },
      );
    }
    throw error;
  }
  const records = entries
    .filter((e) => e.id === id)
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.occurrence - b.occurrence);
  return { id, records };
}
