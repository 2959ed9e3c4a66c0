/**
 * A structural validator written from the specs, independently of
 * src/provenance/check.ts, to test that stamps are what other tools expect:
 * - in-toto attestation spec/v1/statement.md: `_type` (TypeURI, required),
 *   `subject` (ResourceDescriptor[], required, each with `digest`),
 *   `predicateType` (TypeURI, required), `predicate` (object, optional);
 * - spec/v1/resource_descriptor.md: one of `uri`, `digest`, `content`;
 *   `name`, `uri`, `content`, `downloadLocation`, `mediaType` strings;
 *   `annotations` an object;
 * - spec/v1/digest_set.md: algorithm → lowercase hex for the standard names;
 * - spec/v1/field_types.md: TypeURI/ResourceURI with a lowercase scheme and
 *   authority; Timestamp is RFC 3339 in UTC;
 * - slsa.dev/provenance/v1: `buildDefinition` {`buildType` TypeURI and
 *   `externalParameters` object required, `internalParameters` object,
 *   `resolvedDependencies` ResourceDescriptor[]}, `runDetails` {`builder`
 *   {`id` TypeURI required, `builderDependencies` ResourceDescriptor[],
 *   `version` map string → string} required, `metadata` {`invocationId`
 *   string, `startedOn`/`finishedOn` Timestamp}, `byproducts`
 *   ResourceDescriptor[]}.
 * Returns one message per violation, in field order; [] when valid.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

// RFC 3986 scheme; if there is an authority, it is lowercase (case-normalized, §6.2.2.1).
const URI = /^[a-z][a-z0-9+.-]*:(?!\/\/[^/]*[A-Z])\S+$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const HEX = /^[0-9a-f]+$/;
const STANDARD_ALGORITHMS = new Set([
  "sha256",
  "sha224",
  "sha384",
  "sha512",
  "sha512_224",
  "sha512_256",
  "sha3_224",
  "sha3_256",
  "sha3_384",
  "sha3_512",
  "shake128",
  "shake256",
  "blake2b",
  "blake2s",
  "ripemd160",
  "sm3",
  "gost",
  "sha1",
  "md5",
  "gitCommit",
  "gitTree",
  "gitBlob",
  "gitTag",
]);

export function validateStatementV1(s: unknown): string[] {
  const errors: string[] = [];
  const err = (path: string, why: string) => errors.push(`${path}: ${why}`);
  if (!isObj(s)) return ["statement: must be an object"];

  if (s._type !== "https://in-toto.io/Statement/v1")
    err("_type", "must be https://in-toto.io/Statement/v1");
  if (!Array.isArray(s.subject) || s.subject.length === 0) {
    err("subject", "required non-empty array");
  } else {
    s.subject.forEach((rd, i) => {
      if (isObj(rd) && rd.digest === undefined) err(`subject[${i}].digest`, "required");
      else descriptor(rd, `subject[${i}]`, err);
    });
  }
  if (typeof s.predicateType !== "string" || !URI.test(s.predicateType)) {
    err("predicateType", "must be a TypeURI string");
  }
  if (s.predicate === undefined) return errors;
  if (!isObj(s.predicate)) {
    err("predicate", "must be an object");
    return errors;
  }

  // SLSA Provenance v1
  const def = s.predicate.buildDefinition;
  if (!isObj(def)) err("predicate.buildDefinition", "required object");
  else {
    if (typeof def.buildType !== "string" || !URI.test(def.buildType)) {
      err("predicate.buildDefinition.buildType", "required TypeURI");
    }
    if (!isObj(def.externalParameters)) {
      err("predicate.buildDefinition.externalParameters", "required object");
    }
    if (def.internalParameters !== undefined && !isObj(def.internalParameters)) {
      err("predicate.buildDefinition.internalParameters", "must be an object");
    }
    descriptors(def.resolvedDependencies, "predicate.buildDefinition.resolvedDependencies", err);
  }
  const run = s.predicate.runDetails;
  if (!isObj(run)) err("predicate.runDetails", "required object");
  else {
    const b = run.builder;
    if (!isObj(b)) err("predicate.runDetails.builder", "required object");
    else {
      if (typeof b.id !== "string" || !URI.test(b.id)) {
        err("predicate.runDetails.builder.id", "required TypeURI");
      }
      descriptors(b.builderDependencies, "predicate.runDetails.builder.builderDependencies", err);
      if (
        b.version !== undefined &&
        !(isObj(b.version) && Object.values(b.version).every((v) => typeof v === "string"))
      ) {
        err("predicate.runDetails.builder.version", "must map names to strings");
      }
    }
    const m = run.metadata;
    if (m !== undefined) {
      if (!isObj(m)) err("predicate.runDetails.metadata", "must be an object");
      else {
        if (m.invocationId !== undefined && typeof m.invocationId !== "string") {
          err("predicate.runDetails.metadata.invocationId", "must be a string");
        }
        for (const k of ["startedOn", "finishedOn"]) {
          const t = m[k];
          if (t !== undefined && !(typeof t === "string" && TIMESTAMP.test(t))) {
            err(`predicate.runDetails.metadata.${k}`, "must be an RFC 3339 UTC Timestamp");
          }
        }
      }
    }
    descriptors(run.byproducts, "predicate.runDetails.byproducts", err);
  }
  return errors;
}

function descriptors(list: unknown, path: string, err: (p: string, w: string) => void): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    err(path, "must be an array of ResourceDescriptor");
    return;
  }
  list.forEach((rd, i) => {
    descriptor(rd, `${path}[${i}]`, err);
  });
}

function descriptor(rd: unknown, path: string, err: (p: string, w: string) => void): void {
  if (!isObj(rd)) {
    err(path, "must be a ResourceDescriptor object");
    return;
  }
  if (rd.uri === undefined && rd.digest === undefined && rd.content === undefined) {
    err(path, "must set uri, digest or content");
  }
  for (const k of ["name", "content", "mediaType"]) {
    if (rd[k] !== undefined && typeof rd[k] !== "string") err(`${path}.${k}`, "must be a string");
  }
  for (const k of ["uri", "downloadLocation"]) {
    const u = rd[k];
    if (u !== undefined && !(typeof u === "string" && URI.test(u))) {
      err(`${path}.${k}`, "must be a ResourceURI");
    }
  }
  if (rd.content !== undefined && typeof rd.content === "string") {
    if (Buffer.from(rd.content, "base64").toString("base64") !== rd.content) {
      err(`${path}.content`, "must be base64");
    }
  }
  if (rd.digest !== undefined) {
    if (!isObj(rd.digest) || Object.keys(rd.digest).length === 0) {
      err(`${path}.digest`, "must be a non-empty DigestSet");
    } else {
      for (const [alg, value] of Object.entries(rd.digest)) {
        if (typeof value !== "string") err(`${path}.digest.${alg}`, "must be a string");
        else if (STANDARD_ALGORITHMS.has(alg) && !HEX.test(value)) {
          err(`${path}.digest.${alg}`, "must be lowercase hex");
        }
      }
    }
  }
  if (rd.annotations !== undefined && !isObj(rd.annotations)) {
    err(`${path}.annotations`, "must be an object");
  }
}
