/**
 * The stamp itself: an in-toto Statement v1 whose predicate is SLSA
 * Provenance v1, built from an invocation's manifest and identity. Pure: no
 * file I/O here (stamp.ts and verify.ts do that), so the CLI can print a
 * statement and tests can pin one.
 *
 * Specs followed (field names and shapes):
 * - in-toto attestation spec/v1/statement.md: `_type`, `subject`, `predicateType`, `predicate`;
 * - spec/v1/resource_descriptor.md: `name`, `uri`, `digest`, `content`, `mediaType`…;
 * - spec/v1/digest_set.md: algorithm name → lowercase hex;
 * - spec/v1/field_types.md#Timestamp: RFC 3339 in UTC ("Z");
 * - slsa.dev/provenance/v1: `buildDefinition {buildType, externalParameters,
 *   internalParameters, resolvedDependencies}`, `runDetails {builder {id,
 *   version}, metadata {invocationId, startedOn, finishedOn}, byproducts}`.
 */
import { randomUUID } from "node:crypto";
import { StampError } from "../errors.js";
import {
  assertManifest,
  canonicalJson,
  isIdentity,
  type Manifest,
  type ModelManifest,
  manifestIdentity,
  sha256Hex,
  wtf8,
} from "../identity/index.js";
import { type Entry, type EntryMeta, validateEntry } from "../store/index.js";
import { INVOCACHE_VERSION } from "../version.js";
import {
  IDENTITY_BYPRODUCT,
  INVOCACHE_BUILDER_ID,
  INVOCATION_BUILD_TYPE_V1,
  MODEL_DEPENDENCY,
  RESPONSE_BYPRODUCT,
  SLSA_PROVENANCE_V1,
  STATEMENT_TYPE_V1,
} from "./constants.js";

/** in-toto DigestSet: algorithm name → lowercase hex (spec/v1/digest_set.md). */
export type DigestSet = Record<string, string>;

/** in-toto ResourceDescriptor (spec/v1/resource_descriptor.md): one of `uri`, `digest`, `content` is set. */
export interface ResourceDescriptor {
  name?: string;
  uri?: string;
  digest?: DigestSet;
  /** Base64 of the resource's bytes. */
  content?: string;
  downloadLocation?: string;
  mediaType?: string;
  annotations?: Record<string, unknown>;
}

/**
 * `externalParameters` of buildType `pkg:npm/invocache#docs/build-types/invocation-v1.md`:
 * the manifest's fields, with the prompt (and params) as digests so the
 * parameters stay small and free of prompt text.
 */
export interface InvocationParameters {
  role: string;
  /** `""` when no model was named. */
  model: string;
  /** The normalized task. */
  task: string;
  attempt: number;
  /** sha256 of the WTF-8 (for well-formed text: UTF-8) bytes of the normalized prompt. */
  promptDigest: { sha256: string };
  /** sha256 of the WTF-8 bytes of the JCS text of `manifest.params`; only when params are present. */
  paramsDigest?: { sha256: string };
}

/** `internalParameters`: what invocache itself resolved for this invocation. */
export interface InvocationInternalParameters {
  /** The manifest, exactly as hashed: a verifier recomputes the identity from it. */
  manifest: ModelManifest;
  /** n-th call with this identity in its run (0 outside runs). */
  occurrence: number;
  /** The stored entry's metadata (recordedAt, durationMs, verdict…), when stamped with an entry. */
  recording?: EntryMeta;
}

/** An invocache stamp: one line of `<artifact>.intoto.jsonl`. */
export interface ProvenanceStatement {
  _type: typeof STATEMENT_TYPE_V1;
  subject: { name: string; digest: { sha256: string } }[];
  predicateType: typeof SLSA_PROVENANCE_V1;
  predicate: {
    buildDefinition: {
      buildType: typeof INVOCATION_BUILD_TYPE_V1;
      externalParameters: InvocationParameters;
      internalParameters: InvocationInternalParameters;
      resolvedDependencies: ResourceDescriptor[];
    };
    runDetails: {
      builder: { id: typeof INVOCACHE_BUILDER_ID; version: { invocache: string } };
      metadata: {
        /** Unique per stamp unless the caller passes one: `urn:uuid:…`. */
        invocationId: string;
        startedOn?: string;
        finishedOn?: string;
        /** Extension field (SLSA `<vendor>_<field>` convention): the output was replayed from a recording. */
        invocache_replayed: boolean;
      };
      byproducts: ResourceDescriptor[];
    };
  };
}

/** Options of `stampArtifact` and {@link provenanceStatement}. */
export interface StampOptions {
  /** The invocation identity (64 lowercase hex), e.g. `recorder.last.id`. */
  id: string;
  /** The manifest it is the identity of, e.g. `recorder.last.manifest`. Checked: `manifestIdentity(manifest) === id`. */
  manifest: Manifest;
  /** The stored entry that answered the call: adds its metadata and a digest of its response. */
  entry?: Entry | undefined;
  /** Occurrence of the call in its run, e.g. `recorder.last.occurrence`. Default `entry.meta.occurrence`, else 0. */
  occurrence?: number | undefined;
  /** The output was replayed from a recording (`recorder.last.hit`). Default false. */
  replayed?: boolean | undefined;
  /** `runDetails.metadata.invocationId`. Default: a fresh `urn:uuid:…` per stamp. */
  invocationId?: string | undefined;
  /** When the invocation started: a `Date` or an RFC 3339 UTC string. Omitted when not given. */
  startedOn?: Date | string | undefined;
  /** When the invocation finished: a `Date` or an RFC 3339 UTC string. Omitted when not given. */
  finishedOn?: Date | string | undefined;
}

/** The artifact a statement is about. */
export interface StampSubject {
  /** Subject name: the artifact's file name. */
  name: string;
  /** `sha256:<hex>`, as `hashArtifact` returns it. */
  digest: string;
}

const SHA256_REF = /^sha256:([0-9a-f]{64})$/;
// in-toto Timestamp: RFC 3339, UTC "Z" (spec/v1/field_types.md#Timestamp).
const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * The stamp for one artifact and one invocation, as an object. Throws
 * `StampError` (`ERR_STAMP_IDENTITY`) when `opts.id` is not the identity of
 * `opts.manifest` (or of `opts.entry`), `TypeError`/`RangeError` naming the
 * argument for bad arguments.
 *
 * @example
 * const statement = provenanceStatement(
 *   { name: "plan.md", digest: await hashArtifact("out/plan.md") },
 *   { id: recorder.last.id, manifest: recorder.last.manifest, replayed: recorder.last.hit },
 * );
 * statement.predicate.runDetails.byproducts[0].digest.sha256 === recorder.last.id; // true
 */
export function provenanceStatement(
  subject: StampSubject,
  opts: StampOptions,
): ProvenanceStatement {
  if (subject === null || typeof subject !== "object") {
    throw new TypeError("subject must be an object like { name, digest: 'sha256:<hex>' }");
  }
  if (typeof subject.name !== "string" || subject.name === "") {
    throw new TypeError("subject.name must be a non-empty string (the artifact's file name)");
  }
  const subjectHex = SHA256_REF.exec(String(subject.digest))?.[1];
  if (subjectHex === undefined) {
    throw new TypeError(
      `subject.digest must be "sha256:<64 lowercase hex>" as hashArtifact returns, got ${describe(subject.digest)}`,
    );
  }
  return buildStatement(subject.name, subjectHex, checkStampOptions(opts));
}

/**
 * The statement for already checked options (see {@link provenanceStatement}).
 *
 * @example
 * const checked = checkStampOptions({ id, manifest });
 * buildStatement("plan.md", digestHex, checked);
 */
export function buildStatement(
  name: string,
  subjectHex: string,
  o: CheckedStampOptions,
): ProvenanceStatement {
  const timing: { startedOn?: string; finishedOn?: string } = {};
  if (o.startedOn !== undefined) timing.startedOn = o.startedOn;
  if (o.finishedOn !== undefined) timing.finishedOn = o.finishedOn;
  // Cloned: the statement must not alias the caller's manifest (recorder.last.manifest).
  const internal: InvocationInternalParameters = {
    manifest: structuredClone(o.manifest),
    occurrence: o.occurrence,
  };
  const byproducts: ResourceDescriptor[] = [
    // The identity is literally sha256 of "invocache/invocation/v1\n" ‖
    // JCS(manifest): a digest of real bytes a verifier can rebuild from
    // internalParameters.manifest (docs/identity.md).
    { name: IDENTITY_BYPRODUCT, digest: { sha256: o.id } },
  ];
  if (o.entry !== undefined) {
    internal.recording = structuredClone(o.entry.meta);
    byproducts.push({
      name: RESPONSE_BYPRODUCT,
      digest: { sha256: jsonDigest(o.entry.response as CanonicalValue) },
      mediaType: "application/json",
    });
  }
  return {
    _type: STATEMENT_TYPE_V1,
    subject: [{ name, digest: { sha256: subjectHex } }],
    predicateType: SLSA_PROVENANCE_V1,
    predicate: {
      buildDefinition: {
        buildType: INVOCATION_BUILD_TYPE_V1,
        externalParameters: invocationParameters(o.manifest),
        internalParameters: internal,
        resolvedDependencies: resolvedDependencies(o.manifest),
      },
      runDetails: {
        builder: { id: INVOCACHE_BUILDER_ID, version: { invocache: INVOCACHE_VERSION } },
        metadata: {
          invocationId: o.invocationId,
          ...timing,
          invocache_replayed: o.replayed,
        },
        byproducts,
      },
    },
  };
}

/**
 * `externalParameters` for a manifest. SLSA v1 asks for the values passed in,
 * kept small, with digests where a value is a document (footnote on
 * "evaluated configuration": "record the digest directly in
 * externalParameters"); the prompt is such a document.
 *
 * @example
 * invocationParameters(manifest)
 * // { role: "planner", model: "gpt-5", task: "T-1", attempt: 0, promptDigest: { sha256: "1ea0…" } }
 */
export function invocationParameters(manifest: ModelManifest): InvocationParameters {
  const p: InvocationParameters = {
    role: manifest.role,
    model: manifest.model,
    task: manifest.task,
    attempt: manifest.attempt,
    promptDigest: { sha256: textDigest(manifest.prompt) },
  };
  if (manifest.params !== undefined) {
    p.paramsDigest = { sha256: jsonDigest(manifest.params as CanonicalValue) };
  }
  return p;
}

/**
 * `resolvedDependencies` for a manifest: one descriptor per input (in
 * manifest order, duplicates kept) and the model as a `uri` when one is named.
 * SLSA v1: "Metadata about those parameter values, particularly digests of
 * artifacts referenced by those parameters, SHOULD instead go in
 * resolvedDependencies".
 *
 * @example
 * resolvedDependencies(manifest)
 * // [{ digest: { sha256: "4b2d…" } }, { name: "model", uri: "model:gpt-5" }]
 */
export function resolvedDependencies(manifest: ModelManifest): ResourceDescriptor[] {
  const deps = manifest.inputs.map(inputDescriptor);
  if (manifest.model !== "") deps.push({ name: MODEL_DEPENDENCY, uri: modelUri(manifest.model) });
  return deps;
}

// DigestSet algorithms of in-toto spec/v1/digest_set.md with a fixed hex
// length. Only these are turned into digests: the length check keeps a
// truncated "sha256:abc" (or an unrelated "git:abc") from posing as one.
const HEX_LENGTH: Record<string, readonly number[]> = {
  sha1: [40],
  sha224: [56],
  sha256: [64],
  sha384: [96],
  sha512: [128],
  sha512_224: [56],
  sha512_256: [64],
  sha3_224: [56],
  sha3_256: [64],
  sha3_384: [96],
  sha3_512: [128],
  blake2b: [128],
  blake2s: [64],
  gitCommit: [40, 64],
  gitTree: [40, 64],
  gitBlob: [40, 64],
  gitTag: [40, 64],
};
const ALGORITHM_REF = /^([A-Za-z0-9_]+):([0-9a-f]+)$/;

/**
 * An input artifact as a ResourceDescriptor. `<alg>:<lowercase hex>` with a
 * DigestSet algorithm and its length (`sha256:<64 hex>` is what
 * `hashArtifact` returns) becomes `{ digest: { <alg>: hex } }`. Any other
 * string (callers may pass any text as an input hash) is kept byte-exact as
 * `content`, the base64 of its WTF-8 bytes, since a descriptor needs one of
 * `uri`, `digest` or `content` (spec/v1/resource_descriptor.md).
 *
 * @example
 * inputDescriptor("sha256:9f86…") // { digest: { sha256: "9f86…" } }
 * inputDescriptor("spec.md")      // { content: "c3BlYy5tZA==" }
 */
export function inputDescriptor(input: string): ResourceDescriptor {
  const m = ALGORITHM_REF.exec(input);
  if (m !== null) {
    // ALGORITHM_REF has two groups that always take part in a match: both are strings.
    const [, alg, hex] = m as unknown as [string, string, string];
    if (Object.hasOwn(HEX_LENGTH, alg) && HEX_LENGTH[alg]!.includes(hex.length)) {
      return { digest: { [alg]: hex } };
    }
  }
  return { content: Buffer.from(wtf8(input)).toString("base64") };
}

/**
 * `model:<name>`, the name percent-encoded (RFC 3986 §2.1, over its WTF-8
 * bytes) except for unreserved characters and `/ : @ ! $ & ' ( ) * + , ; =`,
 * which are legal in a URI path (RFC 3986 §3.3 pchar). So
 * `openai/gpt-4o` → `model:openai/gpt-4o`, `llama3:8b` → `model:llama3:8b`,
 * `my model` → `model:my%20model`; never `?` or `#`, which would start a
 * query or fragment.
 *
 * @example
 * modelUri("openai/gpt-4o mini") // "model:openai/gpt-4o%20mini"
 */
export function modelUri(model: string): string {
  let out = "model:";
  for (const byte of wtf8(model)) {
    const c = String.fromCharCode(byte);
    out += PCHAR.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]$/;

/**
 * sha256 hex of a string's WTF-8 bytes (UTF-8 when well-formed), as the identity recipe encodes text.
 *
 * @example
 * textDigest("abc") // "ba7816bf…15ad"
 */
export function textDigest(text: string): string {
  return sha256Hex(wtf8(text));
}

/** A JSON value as `canonicalJson` takes it. */
type CanonicalValue = Parameters<typeof canonicalJson>[0];

/**
 * sha256 hex of the JCS text of a JSON value (RFC 8785), WTF-8 encoded.
 *
 * @example
 * jsonDigest({ temperature: 0.2 }) === textDigest('{"temperature":0.2}') // true
 */
export function jsonDigest(value: CanonicalValue): string {
  return textDigest(canonicalJson(value));
}

/** {@link StampOptions} after validation, with defaults filled in. */
export interface CheckedStampOptions {
  id: string;
  manifest: ModelManifest;
  entry: Entry | undefined;
  occurrence: number;
  replayed: boolean;
  invocationId: string;
  startedOn: string | undefined;
  finishedOn: string | undefined;
}

/**
 * Validate stamp options: `TypeError`/`RangeError` naming the argument, and
 * `StampError` (`ERR_STAMP_IDENTITY`) when the id, manifest and entry are not
 * of one invocation.
 *
 * @example
 * checkStampOptions({ id: recorder.last.id, manifest: recorder.last.manifest }).invocationId // "urn:uuid:…"
 */
export function checkStampOptions(opts: StampOptions): CheckedStampOptions {
  if (opts === null || typeof opts !== "object") {
    throw new TypeError("opts must be an object like { id, manifest, entry?, replayed? }");
  }
  const { id } = opts;
  if (!isIdentity(id)) {
    throw new TypeError(
      `opts.id must be an invocation identity (64 lowercase hex, e.g. recorder.last.id), got ${describe(id)}`,
    );
  }
  const manifest = assertManifest(opts.manifest, "opts.manifest");
  const actual = manifestIdentity(manifest);
  if (actual !== id) {
    throw new StampError(
      "ERR_STAMP_IDENTITY",
      `stamp: opts.id ${id.slice(0, 12)}… is not the identity of opts.manifest, which hashes to ` +
        `${actual.slice(0, 12)}… (identity recipe v1). Pass the id and manifest of the same call ` +
        "(recorder.last.id with recorder.last.manifest), or compute the id with manifestIdentity(manifest).",
    );
  }
  let entry: Entry | undefined;
  if (opts.entry !== undefined) {
    try {
      entry = validateEntry(opts.entry, "opts.entry");
    } catch (error) {
      throw new TypeError(`opts.entry is not an invocache entry: ${(error as Error).message}`, {
        cause: error,
      });
    }
    // Both manifests are JSON (one validated above, one the caller's, built by identity):
    // interface types widened to canonicalJson's input type.
    // cast: Manifest is an interface (no index signature) of JSON data, checked when built: canonical JSON takes it as is.
    if (
      entry.id !== id ||
      canonicalJson(entry.manifest as unknown as CanonicalValue) !==
        canonicalJson(manifest as unknown as CanonicalValue)
    ) {
      throw new StampError(
        "ERR_STAMP_IDENTITY",
        `stamp: opts.entry records ${entry.id.slice(0, 12)}… but opts.id is ${id.slice(0, 12)}…` +
          (entry.id === id ? " and its manifest differs from opts.manifest" : "") +
          ". Pass the entry that answered this call (store key entryKey(namespace, id, occurrence)).",
      );
    }
  }
  let occurrence = opts.occurrence;
  if (occurrence === undefined) occurrence = entry?.meta.occurrence ?? 0;
  else if (!Number.isSafeInteger(occurrence) || occurrence < 0) {
    throw new RangeError(`opts.occurrence must be an integer >= 0, got ${describe(occurrence)}`);
  } else if (entry !== undefined && entry.meta.occurrence !== occurrence) {
    throw new RangeError(
      `opts.occurrence is ${occurrence} but opts.entry is occurrence ${entry.meta.occurrence}; pass the entry of this occurrence`,
    );
  }
  const replayed = opts.replayed ?? false;
  if (typeof replayed !== "boolean") {
    throw new TypeError(
      `opts.replayed must be a boolean (recorder.last.hit), got ${describe(replayed)}`,
    );
  }
  const invocationId = opts.invocationId ?? `urn:uuid:${randomUUID()}`;
  if (typeof invocationId !== "string" || invocationId === "") {
    throw new TypeError(
      `opts.invocationId must be a non-empty string, got ${describe(invocationId)}`,
    );
  }
  const startedOn = timestamp(opts.startedOn, "opts.startedOn");
  const finishedOn = timestamp(opts.finishedOn, "opts.finishedOn");
  if (
    startedOn !== undefined &&
    finishedOn !== undefined &&
    Date.parse(startedOn) > Date.parse(finishedOn)
  ) {
    throw new RangeError(`opts.startedOn (${startedOn}) is after opts.finishedOn (${finishedOn})`);
  }
  return { id, manifest, entry, occurrence, replayed, invocationId, startedOn, finishedOn };
}

function timestamp(value: Date | string | undefined, arg: string): string | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new RangeError(`${arg} is an invalid Date`);
    return value.toISOString();
  }
  if (typeof value !== "string" || !isUtcTimestamp(value)) {
    throw new TypeError(
      `${arg} must be a Date or an RFC 3339 UTC timestamp such as 2026-01-31T12:00:00.000Z, got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * An in-toto Timestamp: RFC 3339 in UTC (spec/v1/field_types.md#Timestamp).
 *
 * @example
 * isUtcTimestamp("1985-04-12T23:20:50.52Z") // true
 * isUtcTimestamp("1985-04-12T23:20:50+01:00") // false
 */
export function isUtcTimestamp(value: unknown): value is string {
  return typeof value === "string" && UTC_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
}

/** A short rendering of a bad argument for error messages. */
function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined)
    return String(v);
  return Array.isArray(v) ? "an array" : typeof v;
}
