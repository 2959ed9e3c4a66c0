/**
 * Building the stored entry for a live answer, and the entry size limit:
 * larger entries are refused whole (never truncated), with an error that
 * names the part that is large.
 */
import { manifestIdentity } from "../identity/index.js";
import { NORMALIZATION_VERSION } from "../normalize/index.js";
import type { Entry, JsonValue } from "../store/index.js";
import { extractUsage } from "../usage/index.js";
import { INVOCACHE_VERSION } from "../version.js";
import { type CallContext, type Core, storable } from "./core.js";
import { EntryTooLargeError } from "./errors.js";
import { servedStep } from "./run-scope.js";
import type { StreamTooLarge } from "./stream-limit.js";

/** The entry that records `value` for this call (secrets redacted). */
export function buildEntry(
  core: Pick<Core, "secrets">,
  c: CallContext,
  value: JsonValue,
  durationMs: number,
): Entry {
  // Tokens as the response reports them (none for a shape invocache does not read).
  const usage = extractUsage(value);
  return {
    v: 1,
    id: c.id,
    // Redacted here, once, for every store (a cassette only refuses what is left):
    // the manifest's strings were normalized with the identity's rules, the
    // recorder's own may be wider (its env, its shapes). A Manifest is JSON but an
    // interface type, so it is widened for redaction and narrowed back (redaction
    // replaces strings with strings: the shape stays).
    manifest: storable(core, c.manifest as unknown as JsonValue) as unknown as Entry["manifest"],
    // The caller gets the live value; the store never sees a secret.
    response: storable(core, value),
    meta: {
      recordedAt: new Date().toISOString(),
      durationMs,
      ...(usage === undefined ? {} : { usage }),
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: c.occurrence,
      attempt: c.manifest.attempt,
      ...(c.manifest.attempt > 0 ? { parent: parentId(c) } : {}),
    },
  };
}

/** The size error for an entry over the limit, or undefined when it fits. */
export function oversize(
  core: Pick<Core, "maxEntryBytes">,
  c: CallContext,
  entry: Entry,
  value: unknown,
): EntryTooLargeError | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(entry));
  if (bytes <= core.maxEntryBytes) return undefined;
  const requestBytes = Buffer.byteLength(JSON.stringify(entry.manifest));
  const responseBytes = Buffer.byteLength(JSON.stringify(entry.response));
  return new EntryTooLargeError(c.id, bytes, core.maxEntryBytes, value, {
    part: requestBytes > responseBytes ? "request" : "response",
    requestBytes,
    responseBytes,
  });
}

/** The size error for a stream whose recording was given up at the limit. */
export function streamOversize(
  core: Pick<Core, "maxEntryBytes">,
  c: CallContext,
  limit: StreamTooLarge,
  value: unknown,
): EntryTooLargeError {
  const requestBytes = Buffer.byteLength(JSON.stringify(c.manifest));
  return new EntryTooLargeError(c.id, limit.bytes + requestBytes, core.maxEntryBytes, value, {
    part: "response",
    requestBytes,
    responseBytes: limit.bytes,
    streamEvents: limit.events,
  });
}

/**
 * The identity of attempt n-1 of the same step (RELOOP layer 3: verdict
 * chains): inside a run, the call it actually served of the same kind,
 * role and task at attempt n-1 (a retry whose prompt carries the gate's feedback has
 * an identity of its own); outside a run, or when no such call was served,
 * the identity attempt n-1 would have had with the same manifest.
 */
function parentId(c: CallContext): string {
  const served = c.scope?.previousAttempt(servedStep(c.manifest));
  return served?.id ?? manifestIdentity({ ...c.manifest, attempt: c.manifest.attempt - 1 });
}
