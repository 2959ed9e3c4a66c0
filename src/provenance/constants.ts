/**
 * The URIs and names a stamp is recognized by (docs/provenance.md). They are
 * type identifiers, not addresses: in-toto TypeURIs "SHOULD resolve to a
 * human-readable description, but MAY be unresolvable" and carry their major
 * version (in-toto attestation spec/v1/field_types.md#TypeURI).
 */

/** `_type` of an in-toto Statement v1 (in-toto attestation spec/v1/statement.md). */
export const STATEMENT_TYPE_V1 = "https://in-toto.io/Statement/v1";

/** `predicateType` of SLSA Provenance v1 (slsa.dev/provenance/v1). */
export const SLSA_PROVENANCE_V1 = "https://slsa.dev/provenance/v1";

/**
 * `buildDefinition.buildType` of an invocache stamp: "one model invocation,
 * identity recipe v1", defined by docs/build-types/invocation-v1.md. The URI
 * is a package URL (purl, the `pkg:` scheme of package-url/purl-spec) naming
 * that document inside the npm package `invocache`, which ships `docs/`: it
 * names the document without claiming a web host the project does not own.
 * A new identity recipe or a new parameter schema gets a new document and a
 * new major version here (`invocation-v2.md`), so old verifiers report it
 * instead of misreading it.
 */
export const INVOCATION_BUILD_TYPE_V1 = "pkg:npm/invocache#docs/build-types/invocation-v1.md";

/**
 * `runDetails.builder.id`: the invocache library as the build platform, named
 * by its package URL; `builder.version.invocache` says which release.
 */
export const INVOCACHE_BUILDER_ID = "pkg:npm/invocache";

/** The placeholder buildType of stamps written before the build type was documented. */
export const LEGACY_BUILD_TYPE_PREFIX = "https://invocache.dev/invocation/";

/** `name` of the byproduct whose `digest.sha256` is the invocation identity. */
export const IDENTITY_BYPRODUCT = "invocache-identity";

/** `name` of the byproduct whose `digest.sha256` is the recorded response's (when stamped with an entry). */
export const RESPONSE_BYPRODUCT = "invocache-response";

/** `name` of the resolved dependency that names the model. */
export const MODEL_DEPENDENCY = "model";

/**
 * Stamp files are `<artifact>` + this suffix: the in-toto bundle naming
 * convention (spec/v1/bundle.md, "File naming convention").
 */
export const STAMP_SUFFIX = ".intoto.jsonl";
