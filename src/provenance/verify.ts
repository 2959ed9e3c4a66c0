/**
 * Verifying: recompute what a stamp claims (the artifact's sha256, the
 * identity of the stamped manifest, the parameters and dependencies derived
 * from it), open DSSE envelopes and check their signatures against the
 * trusted keys when there are some, and report every mismatch. Content
 * problems are reported, never thrown: a verifier wants the whole list, and
 * "not verified" is an answer, not an exception.
 */
import type { KeyObject } from "node:crypto";
import { basename } from "node:path";
import { StampError } from "../errors.js";
import { hashArtifact, type ModelManifest } from "../identity/index.js";
import { checkLine } from "./check.js";
import { isEnvelope, openEnvelope, type SignatureCheck } from "./envelope-check.js";
import { type TrustedKey, trustedKey } from "./keys.js";
import { stampPathFor } from "./stamp.js";
import { readStampFile } from "./stamp-file.js";
import type { ProvenanceStatement } from "./statement.js";

/** Options of {@link verifyStamp}. */
export interface VerifyOptions {
  /**
   * Lines that are not invocache stamps (another `_type`, `predicateType` or
   * `buildType`, a DSSE envelope…): `"problem"` (default) fails verification;
   * `"ignore"` lists them in `report.ignored`, as the in-toto bundle spec asks
   * of consumers that share the file with other attestations ("Consumers MUST
   * ignore unrecognized lines").
   */
  foreign?: "problem" | "ignore" | undefined;
  /**
   * Public keys whose signatures are trusted (PEM text, `KeyObject`s, or
   * {@link readTrustedKey} results). When given, every stamp must be a DSSE
   * envelope with a signature that verifies with one of them: an unsigned
   * stamp, or one signed by another key, is a problem. When not given,
   * signatures are not checked and `signed` / `signatures` only say what the
   * line carries.
   */
  trust?: readonly (TrustedKey | string | Buffer | KeyObject)[] | undefined;
}

/** The check of one line of the stamp file. */
export interface StampCheck {
  /** 1-based line number in the stamp file. */
  line: number;
  ok: boolean;
  /** This line's problems (the report's `problems` has them too, prefixed with the line). */
  problems: string[];
  /** The parsed stamp, when the line is an invocache stamp (even one with problems). */
  statement: ProvenanceStatement | undefined;
  /** The invocation identity the stamp claims (its `invocache-identity` byproduct). */
  id: string | undefined;
  invocationId: string | undefined;
  /** `runDetails.metadata.invocache_replayed`. */
  replayed: boolean | undefined;
  /** The stamped manifest, when it is a valid v1 manifest. */
  manifest: ModelManifest | undefined;
  /** The line is a DSSE envelope (signed, or at least meant to be). */
  signed: boolean;
  /** Each signature of the envelope and what it turned out to be ([] for an unsigned stamp). */
  signatures: SignatureCheck[];
  /** keyid of the trusted key that signed it, when `trust` was given and one did. */
  trustedBy: string | undefined;
}

/** What {@link verifyStamp} found. */
export interface VerifyReport {
  /** True when there is at least one stamp and nothing is wrong. */
  ok: boolean;
  /** The artifact path, as given. */
  artifact: string;
  stampPath: string;
  /** `sha256:<hex>` of the artifact now; undefined when it is missing. */
  digest: string | undefined;
  /** Every problem, one sentence each; per-line ones start with `line N:`. */
  problems: string[];
  /** One check per non-blank line that was not ignored, in file order. */
  stamps: StampCheck[];
  /** Lines skipped with `{ foreign: "ignore" }`, and why. */
  ignored: { line: number; reason: string }[];
  /** keyids of the trusted keys, when `trust` was given; undefined when signatures were not checked. */
  trust: string[] | undefined;
}

/**
 * Verify an artifact against its stamp file: the artifact's sha256 must be a
 * subject of every stamp, each stamped manifest must hash to the stamp's
 * identity (recipe v1), and the parameters and dependencies must be the ones
 * that manifest gives. A signed stamp (DSSE envelope) is checked on its
 * payload; with `opts.trust`, every stamp must also carry a signature that
 * verifies with a trusted key. Reports every mismatch; `ok` is true only
 * when there is at least one stamp and none has a problem.
 *
 * A missing artifact or stamp file is a problem in the report. A file that
 * exists but cannot be read (a directory, no permission) throws `StampError`
 * (`ERR_STAMP_IO`).
 *
 * @example
 * const report = await verifyStamp("out/plan.md");
 * if (!report.ok) for (const p of report.problems) console.error(p);
 * report.stamps.map((s) => [s.id?.slice(0, 12), s.replayed]); // [["3f2a…", false], ["3f2a…", true]]
 *
 * const signed = await verifyStamp("out/plan.md", { trust: [await readTrustedKey("ci.pub.pem")] });
 * signed.stamps.map((s) => s.trustedBy?.slice(0, 12)); // ["5b0c1d2e3f4a", "5b0c1d2e3f4a"]
 */
export async function verifyStamp(
  artifactPath: string,
  opts: VerifyOptions = {},
): Promise<VerifyReport> {
  const stampPath = stampPathFor(artifactPath);
  if (opts === null || typeof opts !== "object") {
    throw new TypeError('opts must be an object like { foreign?: "problem" | "ignore" }');
  }
  const foreign = opts.foreign ?? "problem";
  if (foreign !== "problem" && foreign !== "ignore") {
    throw new TypeError(
      `opts.foreign must be "problem" or "ignore", got ${JSON.stringify(foreign)}`,
    );
  }
  let trust: TrustedKey[] | undefined;
  if (opts.trust !== undefined) {
    if (!Array.isArray(opts.trust)) {
      throw new TypeError(
        "opts.trust must be an array of public keys (PEM strings, KeyObjects or readTrustedKey results)",
      );
    }
    trust = opts.trust.map((k, i) =>
      isTrustedKey(k) ? k : trustedKey(k as string, `opts.trust[${i}]`),
    );
  }
  const report: VerifyReport = {
    ok: false,
    artifact: artifactPath,
    stampPath,
    digest: undefined,
    problems: [],
    stamps: [],
    ignored: [],
    trust: trust?.map((k) => k.keyid),
  };

  try {
    report.digest = await hashArtifact(artifactPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new StampError(
        "ERR_STAMP_IO",
        `cannot read artifact ${artifactPath} to verify it: ${(error as Error).message}. Pass the path of a readable file.`,
        { cause: error, path: artifactPath },
      );
    }
    report.problems.push(
      `artifact ${artifactPath} is missing: there is nothing to compare the stamps with`,
    );
  }
  const artifactHex = report.digest?.slice("sha256:".length);

  const text = await readStampFile(stampPath);
  if (text === undefined) {
    report.problems.push(
      `no stamp file ${stampPath}: the artifact was never stamped (stampArtifact, or invocache stamp)`,
    );
    return report;
  }

  const name = basename(artifactPath);
  let stamps = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === "") continue; // the final newline, or blank lines: no value, nothing to check
    const line = i + 1;
    const check: StampCheck = {
      line,
      ok: false,
      problems: [],
      statement: undefined,
      id: undefined,
      invocationId: undefined,
      replayed: undefined,
      manifest: undefined,
      signed: false,
      signatures: [],
      trustedBy: undefined,
    };
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      check.problems.push(`not JSON (${(error as Error).message})`);
      add(report, check);
      continue;
    }
    const envelope = isEnvelope(value) ? openEnvelope(value, trust) : undefined;
    let reason: string | undefined;
    let result: ReturnType<typeof checkLine> | undefined;
    if (envelope?.kind === "foreign") reason = envelope.reason;
    else if (envelope !== undefined && envelope.statement === undefined) {
      // The payload cannot be read: an envelope of ours that was damaged, not a foreign line.
      check.signed = true;
      check.signatures = envelope.signatures;
      check.problems.push(...envelope.problems);
      stamps++;
      add(report, check);
      continue;
    } else {
      result = checkLine(envelope === undefined ? value : envelope.statement, artifactHex, name);
      if (result.kind === "foreign") {
        reason =
          envelope === undefined
            ? result.reason
            : `is a DSSE envelope whose payload ${result.reason}`;
      }
    }
    if (reason !== undefined || result === undefined || result.kind === "foreign") {
      if (foreign === "ignore") {
        report.ignored.push({ line, reason: reason ?? "" });
        continue;
      }
      check.problems.push(`not an invocache stamp: it ${reason}`);
      add(report, check);
      continue;
    }
    stamps++;
    if (envelope?.kind === "envelope") {
      check.signed = true;
      check.signatures = envelope.signatures;
      check.trustedBy = envelope.trustedBy;
      check.problems.push(...envelope.problems);
    } else if (trust !== undefined) {
      check.problems.push(
        "unsigned: trust was asked for, but this stamp is a bare in-toto Statement, not a signed DSSE envelope (stamp with a key: stampArtifact { key }, invocache stamp --key)",
      );
    }
    check.problems.push(...result.problems);
    check.statement = result.statement;
    check.id = result.id;
    check.invocationId = result.invocationId;
    check.replayed = result.replayed;
    check.manifest = result.manifest;
    add(report, check);
  }
  if (stamps === 0) {
    report.problems.push(`no invocache stamp in ${stampPath}`);
  }
  report.ok = report.problems.length === 0;
  return report;
}

function isTrustedKey(k: unknown): k is TrustedKey {
  return (
    typeof k === "object" && k !== null && "keyid" in k && "publicKey" in k && "algorithm" in k
  );
}

function add(report: VerifyReport, check: StampCheck): void {
  check.ok = check.problems.length === 0;
  report.stamps.push(check);
  for (const p of check.problems) report.problems.push(`line ${check.line}: ${p}`);
}
