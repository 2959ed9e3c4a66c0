/**
 * The entry envelope: what the recorder stores for one invocation, and the
 * key layout it is stored under. Versioned, so that an entry written by a
 * newer invocache is reported, not misread.
 *
 * Key layout (one store may hold several namespaces, e.g. one per project):
 *
 * | what  | key                                      |
 * | ----- | ---------------------------------------- |
 * | entry | `${namespace}:e:${id}:${occurrence}`     |
 * | lease | `${namespace}:lease:${id}:${occurrence}` |
 * | run   | `${namespace}:run:${runId}`              |
 *
 * `id` is the 64-hex invocation identity and `occurrence` the n-th call with
 * that identity inside a run (0 outside runs). Namespaces cannot contain `:`,
 * so `list("${ns}:e:")` never returns another namespace's entries.
 */
import { EntryFormatError, UnsupportedEntryVersionError } from "../errors.js";
import { isIdentity, type Manifest } from "../identity/index.js";
import { callKind } from "../identity/internal.js";
import { assertJsonValue } from "../json/index.js";
import type { JsonValue } from "./types.js";
import { type Usage, usageProblem } from "./usage-format.js";

/** The envelope version this invocache writes and the highest it reads. */
export const ENTRY_VERSION = 1;

/** A gate's verdict on a recorded output (RELOOP layer 3). */
export interface EntryVerdict {
  verdict: "accepted" | "rejected";
  /** Why, in the gate's words. */
  reason?: string;
  /** ISO-8601 time the verdict was given. */
  at: string;
}

/** What is known about a recording besides its request and response. */
export interface EntryMeta {
  /** ISO-8601 time the call was recorded. */
  recordedAt: string;
  /** Wall time of the live call, milliseconds (>= 0). */
  durationMs: number;
  /** Tokens the response reported, when its shape is a known one (read by src/usage, stored in the form of usage-format.ts). */
  usage?: Usage;
  /** `NORMALIZATION_VERSION` of the rule table that produced the manifest. */
  normalization: number;
  /** Version of invocache that wrote the entry. */
  invocacheVersion: string;
  /** n-th call with this identity in its run, integer >= 0. */
  occurrence: number;
  /** Retry number; always equal to `manifest.attempt`. */
  attempt: number;
  /** Identity of attempt n-1 of the same step, when this is a retry. */
  parent?: string;
  verdict?: EntryVerdict;
}

/**
 * One recorded invocation, version 1. `response` is any JSON value (stream
 * responses are recorded as `{ kind: "stream", events: [...] }`).
 */
export interface Entry {
  v: 1;
  /** The invocation identity: 64 lowercase hex. */
  id: string;
  manifest: Manifest;
  response: JsonValue;
  meta: EntryMeta;
}

// A namespace is one key segment: no ":" (it separates segments), no control characters.
const NAMESPACE = /^[^:\u0000-\u001f\u007f]{1,128}$/;

/**
 * The store key of an entry.
 *
 * @example
 * entryKey("default", "3f2a…64 hex…", 0) // "default:e:3f2a…:0"
 */
export function entryKey(namespace: string, id: string, occurrence: number): string {
  return `${entryPrefix(namespace, id)}${checkOccurrence(occurrence)}`;
}

/**
 * The prefix under which every entry of a namespace lies, or every occurrence
 * of one identity when `id` is given; pass it to `store.list`.
 *
 * @example
 * for await (const [key, value] of store.list(entryPrefix("default"))) { … }
 */
export function entryPrefix(namespace: string, id?: string): string {
  const base = `${checkNamespace(namespace)}:e:`;
  return id === undefined ? base : `${base}${checkId(id)}:`;
}

/**
 * The lease key guarding the recording of one entry (cross-process single-flight).
 *
 * @example
 * await store.acquireLease(entryLeaseKey("default", id, 0), owner, 30_000);
 */
export function entryLeaseKey(namespace: string, id: string, occurrence: number): string {
  return `${checkNamespace(namespace)}:lease:${checkId(id)}:${checkOccurrence(occurrence)}`;
}

/**
 * The store key of a run record.
 *
 * @example
 * runKey("default", "ci-1234") // "default:run:ci-1234"
 */
export function runKey(namespace: string, runId: string): string {
  if (typeof runId !== "string" || runId === "")
    throw new TypeError("runId must be a non-empty string");
  return `${checkNamespace(namespace)}:run:${runId}`;
}

// `${namespace}:e:${id}:${occurrence}`: a namespace segment, the identity, a decimal occurrence.
const ENTRY_KEY = /^([^:\u0000-\u001f\u007f]{1,128}):e:([0-9a-f]{64}):(0|[1-9][0-9]{0,15})$/;
// `${namespace}:run:${runId}`.
const RUN_KEY = /^([^:\u0000-\u001f\u007f]{1,128}):run:(.+)$/s;

/**
 * The parts of an entry key, or undefined for any other key.
 *
 * @example
 * parseEntryKey(`default:e:${"ab".repeat(32)}:2`) // { namespace: "default", id: "abab…", occurrence: 2 }
 * parseEntryKey("default:run:r1") // undefined
 */
export function parseEntryKey(
  key: string,
): { namespace: string; id: string; occurrence: number } | undefined {
  const m = ENTRY_KEY.exec(key);
  if (m === null) return undefined;
  const occurrence = Number(m[3]);
  if (!Number.isSafeInteger(occurrence)) return undefined;
  return { namespace: m[1]!, id: m[2]!, occurrence };
}

/**
 * Whether `key` is an entry key (`ns:e:<id>:<n>`).
 *
 * @example
 * isEntryKey("default:run:r1") // false
 */
export function isEntryKey(key: string): boolean {
  return parseEntryKey(key) !== undefined;
}

/**
 * The parts of a run-record key, or undefined for any other key.
 *
 * @example
 * parseRunKey("default:run:ci-1") // { namespace: "default", runId: "ci-1" }
 */
export function parseRunKey(key: string): { namespace: string; runId: string } | undefined {
  const m = RUN_KEY.exec(key);
  return m === null ? undefined : { namespace: m[1]!, runId: m[2]! };
}

function checkNamespace(namespace: string): string {
  if (typeof namespace !== "string" || !NAMESPACE.test(namespace)) {
    throw new TypeError(
      `namespace must be 1-128 characters without ":" or control characters, got ${JSON.stringify(namespace)}`,
    );
  }
  return namespace;
}

function checkId(id: string): string {
  if (!isIdentity(id)) {
    throw new TypeError(
      `id must be an invocation identity (64 lowercase hex), got ${JSON.stringify(id)}`,
    );
  }
  return id;
}

function checkOccurrence(occurrence: number): number {
  if (!Number.isSafeInteger(occurrence) || occurrence < 0) {
    throw new RangeError(`occurrence must be an integer >= 0, got ${String(occurrence)}`);
  }
  return occurrence;
}

/**
 * Check that `value` (read from a store or cassette) is an entry this
 * invocache understands, and return it typed. `where` names the source for
 * the error message (store url and key, cassette path and line…).
 *
 * Strict on purpose: every field is checked and unknown fields are refused,
 * because any change to the envelope's shape bumps {@link ENTRY_VERSION}.
 *
 * @throws UnsupportedEntryVersionError when `v` is newer than {@link ENTRY_VERSION}.
 * @throws EntryFormatError for anything else that is not a v1 entry.
 * @example
 * const entry = validateEntry(await store.get(key), `${store.url} ${key}`);
 * entry.meta.recordedAt; // typed
 */
export function validateEntry(
  value: unknown,
  where: string,
  options: { deep?: boolean } = {},
): Entry {
  // `deep: false` skips re-walking response and params to prove they are
  // JSON: a Store's contract already guarantees that of every value it
  // returns, and on the hit path that walk cost more than the read itself.
  // The checks below run on every hit: no closure, no array, no error
  // message is built unless a field is wrong.
  const deep = options.deep ?? true;
  const root = record(value, "$", where);
  checkVersion(root.v, where);
  only(root, "$", ENTRY_FIELDS, ENTRY_ALLOWED, where);
  if (!isIdentity(root.id)) fail(where, "$.id", "must be 64 lowercase hex");
  const manifest = checkManifest(root.manifest, where, deep);
  try {
    if (deep) assertJsonValue(root.response, "$.response");
  } catch (error) {
    fail(where, "$.response", `is not JSON: ${(error as Error).message}`);
  }
  const meta = checkMeta(root.meta, where, deep);
  if (meta.attempt !== manifest.attempt) {
    fail(where, "$.meta.attempt", `must equal $.manifest.attempt (${manifest.attempt})`);
  }
  return value as Entry;
}

/** What a replay hit reads of an entry: all of it but the manifest (`Store.getHit`). */
export type EntryHit = Omit<Entry, "manifest">;

/**
 * Check an entry read for a hit without its manifest (`Store.getHit`):
 * every check of {@link validateEntry} with `deep: false` except the
 * manifest's own, and the entry's id and `meta.attempt` compared with the
 * call's (`expected`: its identity and its manifest's attempt). Undefined
 * when either differs: the caller then reads and checks the whole entry as
 * before (`get`, `validateEntry`), so an entry that does not say it is the
 * one asked for is never served on the strength of this check alone.
 *
 * @throws UnsupportedEntryVersionError, EntryFormatError as validateEntry.
 * @example
 * const hit = validateEntryHit(await store.getHit(key), where, { id, attempt: 0 });
 */
export function validateEntryHit(
  value: unknown,
  where: string,
  expected: { id: string; attempt: number },
): EntryHit | undefined {
  const root = record(value, "$", where);
  checkVersion(root.v, where);
  only(root, "$", HIT_FIELDS, ENTRY_ALLOWED, where);
  if (!isIdentity(root.id)) fail(where, "$.id", "must be 64 lowercase hex");
  if ("manifest" in root) fail(where, "$.manifest", "was not expected in a hit's read");
  const meta = checkMeta(root.meta, where, false);
  if (root.id !== expected.id || meta.attempt !== expected.attempt) return undefined;
  return value as EntryHit;
}

function checkVersion(v: unknown, where: string): void {
  if (typeof v === "number" && Number.isSafeInteger(v) && v > ENTRY_VERSION) {
    throw new UnsupportedEntryVersionError(
      where,
      v,
      ENTRY_VERSION,
      `invocache entry at ${where} uses entry format v${v}, written by a newer invocache; ` +
        `this version reads v${ENTRY_VERSION}. Upgrade invocache, or re-record with INVOCACHE_MODE=record.`,
    );
  }
  if (v !== ENTRY_VERSION) fail(where, "$.v", `must be ${ENTRY_VERSION}, got ${JSON.stringify(v)}`);
}

/** The checks of `$.meta` (every field; `deep` as for validateEntry). */
function checkMeta(value: unknown, where: string, deep: boolean): EntryMeta {
  const meta = record(value, "$.meta", where);
  only(meta, "$.meta", META_FIELDS, META_ALLOWED, where);
  if ("usage" in meta) {
    const problem = usageProblem(meta.usage);
    if (problem !== undefined) fail(where, "$.meta.usage", problem);
  }
  isoTime(meta.recordedAt, "$.meta.recordedAt", where, deep);
  if (
    typeof meta.durationMs !== "number" ||
    !Number.isFinite(meta.durationMs) ||
    meta.durationMs < 0
  ) {
    fail(where, "$.meta.durationMs", "must be a number >= 0");
  }
  count(meta.normalization, "$.meta.normalization", 1, where);
  if (typeof meta.invocacheVersion !== "string" || meta.invocacheVersion === "") {
    fail(where, "$.meta.invocacheVersion", "must be a non-empty string");
  }
  count(meta.occurrence, "$.meta.occurrence", 0, where);
  count(meta.attempt, "$.meta.attempt", 0, where);
  if ("parent" in meta && !isIdentity(meta.parent)) {
    fail(where, "$.meta.parent", "must be 64 lowercase hex");
  }
  if ("verdict" in meta) {
    const verdict = record(meta.verdict, "$.meta.verdict", where);
    only(verdict, "$.meta.verdict", VERDICT_FIELDS, VERDICT_ALLOWED, where);
    if (verdict.verdict !== "accepted" && verdict.verdict !== "rejected") {
      fail(where, "$.meta.verdict.verdict", 'must be "accepted" or "rejected"');
    }
    if ("reason" in verdict && typeof verdict.reason !== "string") {
      fail(where, "$.meta.verdict.reason", "must be a string");
    }
    isoTime(verdict.at, "$.meta.verdict.at", where, deep);
  }
  // cast: every member of `meta` was checked above, field by field: it is an EntryMeta.
  return meta as unknown as EntryMeta;
}

// Each object's required fields, and every field it may have.
const ENTRY_FIELDS = ["v", "id", "manifest", "response", "meta"];
const ENTRY_ALLOWED = new Set(ENTRY_FIELDS);
const HIT_FIELDS = ["v", "id", "response", "meta"];
const META_FIELDS = [
  "recordedAt",
  "durationMs",
  "normalization",
  "invocacheVersion",
  "occurrence",
  "attempt",
];
const META_ALLOWED = new Set([...META_FIELDS, "parent", "verdict", "usage"]);
const VERDICT_FIELDS = ["verdict", "at"];
const VERDICT_ALLOWED = new Set([...VERDICT_FIELDS, "reason"]);

/** The error of a malformed entry: `where` it came from, the field's path and what is wrong. */
function fail(where: string, path: string, why: string): never {
  throw new EntryFormatError(
    where,
    path,
    `invocache entry at ${where} is malformed: ${path} ${why}. ` +
      "Delete the entry or re-record it with INVOCACHE_MODE=record.",
  );
}

function checkManifest(value: unknown, where: string, deep: boolean): Manifest {
  record(value, "$.manifest", where);
  // The manifest schema has one home: identity's kind table (a model call's
  // manifestProblem, a tool call's recipe check).
  const problem = callKind(value).problem(value, deep);
  if (problem !== undefined) {
    fail(
      where,
      problem.field === undefined ? "$.manifest" : `$.manifest.${problem.field}`,
      problem.why,
    );
  }
  return value as Manifest;
}

function record(value: unknown, path: string, where: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return fail(
      where,
      path,
      `must be an object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
    );
  }
  return value as Record<string, unknown>;
}

function only(
  obj: Record<string, unknown>,
  path: string,
  required: readonly string[],
  allowed: ReadonlySet<string>,
  where: string,
): void {
  for (let i = 0; i < required.length; i++) {
    if (!(required[i]! in obj)) fail(where, `${path}.${required[i]}`, "is missing");
  }
  for (const key in obj) {
    if (!allowed.has(key) && Object.hasOwn(obj, key)) {
      fail(where, `${path}.${key}`, "is not a field of entry format v1");
    }
  }
}

function count(value: unknown, path: string, min: number, where: string): void {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    fail(where, path, `must be an integer >= ${min}`);
  }
}

// Date-time with an explicit offset, as Date.prototype.toISOString writes it (and other RFC 3339 forms).
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * `deep: false` (a hit) checks the form only: a hit never reads the time, and
 * `Date.parse` was a measurable part of it. Whoever reads the time (ls,
 * prune, the viewer) validates deeply or parses it itself.
 */
function isoTime(value: unknown, path: string, where: string, deep = true): void {
  if (typeof value !== "string" || !ISO.test(value) || (deep && Number.isNaN(Date.parse(value)))) {
    fail(where, path, "must be an ISO-8601 date-time such as 2026-01-31T12:00:00.000Z");
  }
}
