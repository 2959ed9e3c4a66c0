/**
 * Verifying: recompute what a stamp claims (the artifact's sha256, the
 * identity of the stamped manifest, the parameters and dependencies derived
 * from it) and report every mismatch. Content problems are reported, never
 * thrown: a verifier wants the whole list, and "not verified" is an answer,
 * not an exception.
 */
import { StampError } from "../errors.js";
import { hashArtifact, type Manifest } from "../identity/index.js";
import { checkLine } from "./check.js";
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
  manifest: Manifest | undefined;
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
}

/**
 * Verify an artifact against its stamp file: the artifact's sha256 must be a
 * subject of every stamp, each stamped manifest must hash to the stamp's
 * identity (recipe v1), and the parameters and dependencies must be the ones
 * that manifest gives. Reports every mismatch; `ok` is true only when there
 * is at least one stamp and none has a problem.
 *
 * A missing artifact or stamp file is a problem in the report. A file that
 * exists but cannot be read (a directory, no permission) throws `StampError`
 * (`ERR_STAMP_IO`).
 *
 * @example
 * const report = await verifyStamp("out/plan.md");
 * if (!report.ok) for (const p of report.problems) console.error(p);
 * report.stamps.map((s) => [s.id?.slice(0, 12), s.replayed]); // [["3f2a…", false], ["3f2a…", true]]
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
  const report: VerifyReport = {
    ok: false,
    artifact: artifactPath,
    stampPath,
    digest: undefined,
    problems: [],
    stamps: [],
    ignored: [],
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
    };
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      check.problems.push(`not JSON (${(error as Error).message})`);
      add(report, check);
      continue;
    }
    const result = checkLine(value, artifactHex);
    if (result.kind === "foreign") {
      if (foreign === "ignore") {
        report.ignored.push({ line, reason: result.reason });
        continue;
      }
      check.problems.push(`not an invocache stamp: it ${result.reason}`);
      add(report, check);
      continue;
    }
    stamps++;
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

function add(report: VerifyReport, check: StampCheck): void {
  check.ok = check.problems.length === 0;
  report.stamps.push(check);
  for (const p of check.problems) report.problems.push(`line ${check.line}: ${p}`);
}
