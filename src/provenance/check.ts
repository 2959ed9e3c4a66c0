/**
 * Checking one parsed stamp line. Pure: the caller reads the file and hashes
 * the artifact. Every mismatch is collected, not just the first, because a
 * verifier wants to see at once whether only the artifact changed or the
 * stamp was edited too.
 */
import {
  assertManifest,
  canonicalJson,
  isIdentity,
  type ModelManifest,
  manifestIdentity,
} from "../identity/index.js";
import {
  IDENTITY_BYPRODUCT,
  INVOCACHE_BUILDER_ID,
  INVOCATION_BUILD_TYPE_V1,
  LEGACY_BUILD_TYPE_PREFIX,
  SLSA_PROVENANCE_V1,
  STATEMENT_TYPE_V1,
} from "./constants.js";
import {
  invocationParameters,
  isUtcTimestamp,
  type ProvenanceStatement,
  resolvedDependencies,
} from "./statement.js";

/** What one line turned out to be. */
export type LineCheck =
  | { kind: "foreign"; reason: string }
  | {
      kind: "stamp";
      problems: string[];
      statement: ProvenanceStatement;
      id: string | undefined;
      invocationId: string | undefined;
      replayed: boolean | undefined;
      manifest: ModelManifest | undefined;
    };

type Obj = Record<string, unknown>;

/**
 * Check a parsed line against the artifact's current sha256 (hex, or
 * undefined when the artifact is missing). A line that is not an invocache
 * stamp at all (another `_type`, `predicateType` or `buildType`) is
 * "foreign": the caller decides whether that is a problem.
 *
 * @example
 * const result = checkLine(JSON.parse(line), (await hashArtifact("plan.md")).slice(7));
 * if (result.kind === "stamp") console.log(result.problems);
 */
export function checkLine(
  value: unknown,
  artifactSha256: string | undefined,
  artifactName?: string,
): LineCheck {
  if (!isObject(value))
    return { kind: "foreign", reason: `is ${kindOf(value)}, not a JSON object` };
  if (value._type !== STATEMENT_TYPE_V1) {
    return {
      kind: "foreign",
      reason: `has _type ${fmt(value._type)}, not an in-toto Statement v1 (${STATEMENT_TYPE_V1})`,
    };
  }
  if (value.predicateType !== SLSA_PROVENANCE_V1) {
    return {
      kind: "foreign",
      reason: `has predicateType ${fmt(value.predicateType)}, not SLSA Provenance v1 (${SLSA_PROVENANCE_V1})`,
    };
  }
  const predicate = isObject(value.predicate) ? value.predicate : undefined;
  const def = isObject(predicate?.buildDefinition) ? predicate.buildDefinition : undefined;
  const type = def?.buildType;
  if (type !== INVOCATION_BUILD_TYPE_V1) {
    const newer =
      typeof type === "string" && type.startsWith(LEGACY_BUILD_TYPE_PREFIX)
        ? "; it has the placeholder buildType of earlier invocache versions: stamp the artifact again"
        : typeof type === "string" && type.startsWith("pkg:npm/invocache#docs/build-types/")
          ? "; it was written by another invocache version: verify it with that version"
          : "";
    return {
      kind: "foreign",
      reason: `has buildType ${fmt(type)}, not an invocache invocation (${INVOCATION_BUILD_TYPE_V1})${newer}`,
    };
  }
  return checkStamp(value, artifactSha256, artifactName);
}

function checkStamp(
  s: Obj,
  artifactSha256: string | undefined,
  artifactName: string | undefined,
): LineCheck & { kind: "stamp" } {
  const problems: string[] = [];
  const out: LineCheck & { kind: "stamp" } = {
    kind: "stamp",
    problems,
    // Typed as what it claims to be (its _type, predicateType and buildType matched);
    // `problems` lists every field below where it is not, and the caller reads both.
    statement: s as unknown as ProvenanceStatement,
    id: undefined,
    invocationId: undefined,
    replayed: undefined,
    manifest: undefined,
  };

  // Statement layer (in-toto spec/v1/statement.md): subject is a non-empty
  // list of ResourceDescriptors, each with a digest. Subjects are matched
  // purely by digest, so a renamed artifact still verifies.
  const subjects = s.subject;
  if (!Array.isArray(subjects) || subjects.length === 0) {
    problems.push("subject must be a non-empty array of { name, digest }");
  } else {
    const digests: string[] = [];
    const names: string[] = [];
    let malformed = false;
    subjects.forEach((sub, i) => {
      if (!isObject(sub) || !isDigestSet(sub.digest)) {
        malformed = true;
        problems.push(`subject[${i}].digest must be an object of algorithm → hex strings`);
      } else if (typeof sub.digest.sha256 === "string") digests.push(sub.digest.sha256);
      if (isObject(sub) && typeof sub.name === "string") names.push(sub.name);
    });
    if (digests.length === 0) {
      if (!malformed) problems.push("no subject has a sha256 digest to compare the artifact with");
    } else if (
      artifactSha256 !== undefined &&
      !digests.includes(artifactSha256) &&
      artifactName !== undefined &&
      names.length > 0 &&
      !names.includes(artifactName)
    ) {
      // Neither the bytes nor the name match: a stamp (signed or not) that
      // was made for another artifact and copied into this file.
      problems.push(
        `this stamp is for another artifact: its subject is ${names.map((n) => JSON.stringify(n)).join(", ")} with sha256 ${digests.join(", ")}, ` +
          `not ${JSON.stringify(artifactName)} with sha256 ${artifactSha256}. A stamp copied from another artifact's file proves nothing about this one.`,
      );
    } else if (artifactSha256 !== undefined && !digests.includes(artifactSha256)) {
      problems.push(
        `the artifact changed since it was stamped: its sha256 is now ${artifactSha256} but the stamp was made for ${digests.join(", ")}. ` +
          "Re-run the step that produces it, or stamp it again if the change is intended.",
      );
    }
  }

  const predicate = s.predicate as Obj;
  const def = predicate.buildDefinition as Obj;
  const manifest = checkManifest(def, problems);
  out.manifest = manifest;
  const id = checkByproducts(predicate.runDetails, problems);
  out.id = id;

  if (manifest !== undefined) {
    const actual = manifestIdentity(manifest);
    if (id !== undefined && actual !== id) {
      problems.push(
        `identity mismatch: the stamped manifest hashes to ${actual} (identity recipe v1, docs/identity.md) ` +
          `but the ${IDENTITY_BYPRODUCT} byproduct says ${id}: the manifest or the identity was edited after stamping`,
      );
    }
    compareParameters(def.externalParameters, manifest, problems);
    compareDependencies(def.resolvedDependencies, manifest, problems);
  } else {
    if (!isObject(def.externalParameters)) {
      problems.push("predicate.buildDefinition.externalParameters must be an object");
    }
  }

  const run = predicate.runDetails;
  if (isObject(run)) {
    const builder = run.builder;
    if (!isObject(builder) || builder.id !== INVOCACHE_BUILDER_ID) {
      problems.push(
        `runDetails.builder.id is ${fmt(isObject(builder) ? builder.id : builder)}, not ${INVOCACHE_BUILDER_ID}`,
      );
    } else if (
      builder.version !== undefined &&
      !(
        isObject(builder.version) &&
        Object.values(builder.version).every((v) => typeof v === "string")
      )
    ) {
      problems.push("runDetails.builder.version must be a map of component → version string");
    }
    const meta = run.metadata;
    if (!isObject(meta)) {
      problems.push("runDetails.metadata must be an object with invocationId");
    } else {
      if (typeof meta.invocationId === "string" && meta.invocationId !== "") {
        out.invocationId = meta.invocationId;
      } else problems.push("runDetails.metadata.invocationId must be a non-empty string");
      for (const k of ["startedOn", "finishedOn"] as const) {
        if (meta[k] !== undefined && !isUtcTimestamp(meta[k])) {
          problems.push(
            `runDetails.metadata.${k} must be an RFC 3339 UTC timestamp, got ${fmt(meta[k])}`,
          );
        }
      }
      if (typeof meta.invocache_replayed === "boolean") out.replayed = meta.invocache_replayed;
      else problems.push("runDetails.metadata.invocache_replayed must be true or false");
    }
  }
  return out;
}

function checkManifest(def: Obj, problems: string[]): ModelManifest | undefined {
  const internal = def.internalParameters;
  if (!isObject(internal)) {
    problems.push(
      "predicate.buildDefinition.internalParameters must be an object holding the manifest",
    );
    return undefined;
  }
  const occ = internal.occurrence;
  if (!(typeof occ === "number" && Number.isSafeInteger(occ) && occ >= 0)) {
    problems.push(`internalParameters.occurrence must be an integer >= 0, got ${fmt(occ)}`);
  }
  if (internal.recording !== undefined && !isObject(internal.recording)) {
    problems.push("internalParameters.recording must be an object (the entry's meta)");
  }
  try {
    return assertManifest(internal.manifest, "internalParameters.manifest");
  } catch (error) {
    problems.push(`${(error as Error).message}; the identity cannot be recomputed from this stamp`);
    return undefined;
  }
}

/** The identity byproduct's digest, after checking every byproduct is a ResourceDescriptor. */
function checkByproducts(run: unknown, problems: string[]): string | undefined {
  if (!isObject(run)) {
    problems.push("predicate.runDetails must be an object");
    return undefined;
  }
  const list = run.byproducts;
  if (!Array.isArray(list)) {
    problems.push(
      `runDetails.byproducts must be an array holding the ${IDENTITY_BYPRODUCT} digest`,
    );
    return undefined;
  }
  list.forEach((rd, i) => {
    const why = descriptorProblem(rd);
    if (why !== undefined) problems.push(`runDetails.byproducts[${i}] ${why}`);
  });
  const ids = list.filter((rd) => isObject(rd) && rd.name === IDENTITY_BYPRODUCT) as Obj[];
  if (ids.length !== 1) {
    problems.push(
      `runDetails.byproducts must hold exactly one ${IDENTITY_BYPRODUCT} descriptor, found ${ids.length}`,
    );
    return undefined;
  }
  const sha = isObject(ids[0]!.digest) ? ids[0]!.digest.sha256 : undefined;
  if (!isIdentity(sha)) {
    problems.push(
      `the ${IDENTITY_BYPRODUCT} byproduct's digest.sha256 must be 64 lowercase hex, got ${fmt(sha)}`,
    );
    return undefined;
  }
  return sha;
}

/**
 * externalParameters must be exactly what the stamped manifest gives. SLSA
 * v1: "Verifiers SHOULD reject unrecognized or unexpected fields within
 * externalParameters", so extra fields are problems too.
 */
function compareParameters(actual: unknown, manifest: ModelManifest, problems: string[]): void {
  if (!isObject(actual)) {
    problems.push("predicate.buildDefinition.externalParameters must be an object");
    return;
  }
  // An interface of JSON fields, read here key by key like the stamp's own object.
  const expected = invocationParameters(manifest) as unknown as Obj;
  for (const key of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    if (!(key in expected)) {
      problems.push(`externalParameters.${key} is not a parameter of ${INVOCATION_BUILD_TYPE_V1}`);
    } else if (!(key in actual)) {
      problems.push(
        `externalParameters.${key} is missing (the stamped manifest gives ${fmt(expected[key])})`,
      );
    } else if (!sameJson(actual[key], expected[key])) {
      problems.push(
        `externalParameters.${key} is ${fmt(actual[key])} but the stamped manifest gives ${fmt(expected[key])}`,
      );
    }
  }
}

/** resolvedDependencies must be the manifest's inputs and model; SLSA calls the list unordered. */
function compareDependencies(actual: unknown, manifest: ModelManifest, problems: string[]): void {
  if (!Array.isArray(actual)) {
    problems.push("predicate.buildDefinition.resolvedDependencies must be an array");
    return;
  }
  actual.forEach((rd, i) => {
    const why = descriptorProblem(rd);
    if (why !== undefined) problems.push(`resolvedDependencies[${i}] ${why}`);
  });
  const key = (v: unknown) => {
    try {
      return canonicalJson(v as Parameters<typeof canonicalJson>[0]);
    } catch {
      return JSON.stringify(v);
    }
  };
  const have = actual.map(key).sort();
  const want = resolvedDependencies(manifest).map(key).sort();
  if (have.join("\n") !== want.join("\n")) {
    const missing = want.filter((w) => !have.includes(w));
    const extra = have.filter((h) => !want.includes(h));
    problems.push(
      "resolvedDependencies do not match the stamped manifest's inputs and model" +
        (missing.length > 0 ? `; missing ${missing.join(", ")}` : "") +
        (extra.length > 0 ? `; unexpected ${extra.join(", ")}` : "") +
        (missing.length === 0 && extra.length === 0 ? "; the counts of duplicates differ" : ""),
    );
  }
}

/** Why a value is not an in-toto ResourceDescriptor (spec/v1/resource_descriptor.md), if it is not. */
function descriptorProblem(rd: unknown): string | undefined {
  if (!isObject(rd)) return `is ${kindOf(rd)}, not a ResourceDescriptor object`;
  if (rd.uri === undefined && rd.digest === undefined && rd.content === undefined) {
    return "must set one of uri, digest or content";
  }
  for (const k of ["name", "uri", "content", "downloadLocation", "mediaType"] as const) {
    if (rd[k] !== undefined && typeof rd[k] !== "string") return `has a ${k} that is not a string`;
  }
  if (rd.digest !== undefined && !isDigestSet(rd.digest)) {
    return "has a digest that is not an object of algorithm → hex strings";
  }
  if (rd.annotations !== undefined && !isObject(rd.annotations)) {
    return "has annotations that are not an object";
  }
  return undefined;
}

function isDigestSet(v: unknown): v is Record<string, string> {
  return (
    isObject(v) && Object.keys(v).length > 0 && Object.values(v).every((x) => typeof x === "string")
  );
}

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return (
      canonicalJson(a as Parameters<typeof canonicalJson>[0]) ===
      canonicalJson(b as Parameters<typeof canonicalJson>[0])
    );
  } catch {
    return false;
  }
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return `a ${typeof v}`;
}

/** A value for a problem message: JSON, cut at 80 characters. */
function fmt(v: unknown): string {
  if (v === undefined) return "missing";
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}
