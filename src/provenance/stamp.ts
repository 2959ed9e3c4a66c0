/**
 * Stamping: tie a produced artifact to the invocation that produced it by
 * appending an in-toto/SLSA statement to `<artifact>.intoto.jsonl`.
 */
import type { KeyObject } from "node:crypto";
import { basename } from "node:path";
import { StampError } from "../errors.js";
import { hashArtifact, type Manifest } from "../identity/index.js";
import { STAMP_SUFFIX } from "./constants.js";
import { IN_TOTO_PAYLOAD_TYPE, signEnvelope } from "./dsse.js";
import { type SigningKey, signingKey } from "./keys.js";
import { appendStampLine } from "./stamp-file.js";
import { buildStatement, checkStampOptions, type StampOptions } from "./statement.js";

/**
 * The stamp file of an artifact: `<artifact>.intoto.jsonl` (the in-toto
 * bundle naming convention).
 *
 * @example
 * stampPathFor("out/plan.md") // "out/plan.md.intoto.jsonl"
 */
export function stampPathFor(artifactPath: string): string {
  checkArtifactPath(artifactPath);
  return `${artifactPath}${STAMP_SUFFIX}`;
}

/** Options of {@link stampArtifact}: the statement's, and the key to sign it with. */
export interface StampArtifactOptions extends StampOptions {
  /**
   * Sign the stamp: the statement becomes the payload of a DSSE envelope
   * (payloadType `application/vnd.in-toto+json`) signed with this key. A
   * {@link SigningKey} (readSigningKey), a PEM private key or a private
   * `KeyObject`; Ed25519 or ECDSA P-256. Unsigned when omitted.
   */
  key?: SigningKey | string | Buffer | KeyObject | undefined;
}

/**
 * Stamp an artifact with the invocation that produced it: hashes the file,
 * builds the statement (see docs/provenance.md) and appends it as one line to
 * `<artifact>.intoto.jsonl`, atomically and under a lock. With `key`, the
 * line is a signed DSSE envelope holding the statement; without, the bare
 * statement (an unsigned stamp). Stamping the same
 * artifact again (a replay, another step) appends another line. Resolves to
 * the stamp file's path.
 *
 * @throws StampError `ERR_STAMP_IDENTITY` when `opts.id` is not the identity
 *   of `opts.manifest`; `ERR_STAMP_MALFORMED` when the stamp file holds a line
 *   that is not JSON (nothing is written); `ERR_STAMP_IO` when the artifact
 *   cannot be read or the stamp file cannot be written.
 * @throws TypeError / RangeError naming the argument for bad arguments.
 * @example
 * const answer = await recorder.call(req, () => callModel(req));
 * await writeFile("out/plan.md", answer.text);
 * const { id, manifest, hit } = recorder.last!;
 * await stampArtifact("out/plan.md", { id, manifest, replayed: hit });
 * // -> "out/plan.md.intoto.jsonl"
 */
export async function stampArtifact(
  artifactPath: string,
  opts: StampArtifactOptions,
): Promise<string> {
  const stampPath = stampPathFor(artifactPath);
  // Validate before touching the disk: a bad id or key is reported without
  // hashing a multi-GB artifact first.
  const checked = checkStampOptions(opts);
  const key =
    opts.key === undefined
      ? undefined
      : isSigningKey(opts.key)
        ? opts.key
        : signingKey(opts.key, "opts.key");
  let digest: string;
  try {
    digest = await hashArtifact(artifactPath);
  } catch (error) {
    throw new StampError(
      "ERR_STAMP_IO",
      `cannot read artifact ${artifactPath} to stamp it: ${(error as Error).message}. ` +
        "Write the artifact before stamping it, and pass the path of a file.",
      { cause: error, path: artifactPath },
    );
  }
  const statement = buildStatement(basename(artifactPath), digest.slice("sha256:".length), checked);
  const body = JSON.stringify(statement);
  const line =
    key === undefined
      ? body
      : JSON.stringify(signEnvelope(Buffer.from(body, "utf8"), IN_TOTO_PAYLOAD_TYPE, key));
  await appendStampLine(stampPath, line);
  return stampPath;
}

function isSigningKey(k: unknown): k is SigningKey {
  return typeof k === "object" && k !== null && "privateKey" in k && "keyid" in k;
}

/** What {@link stampFromRecorder} reads from a recorder: its `last` call. */
export interface RecorderLike {
  readonly last: { id: string; occurrence: number; hit: boolean; manifest: Manifest } | undefined;
}

/**
 * Stamp an artifact with the call a recorder answered last
 * (`recorder.last`): its id, manifest and occurrence, and `replayed` when it
 * was a hit. `extra` adds the other {@link StampArtifactOptions} (entry,
 * times, invocationId, key).
 *
 * `recorder.last` is the last call to *finish*: when calls run concurrently,
 * stamp each artifact with the `id`/`manifest` of its own call through
 * {@link stampArtifact} instead.
 *
 * @example
 * const plan = await recorder.call({ role: "planner", model: "gpt-5", prompt }, callModel);
 * await writeFile("out/plan.md", plan.text);
 * await stampFromRecorder("out/plan.md", recorder); // "out/plan.md.intoto.jsonl"
 */
export async function stampFromRecorder(
  artifactPath: string,
  recorder: RecorderLike,
  extra: Omit<StampArtifactOptions, "id" | "manifest" | "occurrence" | "replayed"> = {},
): Promise<string> {
  if (recorder === null || typeof recorder !== "object") {
    throw new TypeError("recorder must be a Recorder (from createRecorder)");
  }
  const last = recorder.last;
  if (last === undefined) {
    throw new TypeError(
      "recorder has not answered a call yet (recorder.last is undefined); stamp after recorder.call() resolves",
    );
  }
  if (extra === null || typeof extra !== "object") {
    throw new TypeError("extra must be an object like { entry?, startedOn?, finishedOn? }");
  }
  return stampArtifact(artifactPath, {
    ...extra,
    id: last.id,
    manifest: last.manifest,
    occurrence: last.occurrence,
    replayed: last.hit,
  });
}

function checkArtifactPath(artifactPath: unknown): asserts artifactPath is string {
  if (typeof artifactPath !== "string" || artifactPath === "") {
    throw new TypeError(
      `artifactPath must be a non-empty file path, got ${artifactPath === "" ? '""' : typeof artifactPath}`,
    );
  }
}
