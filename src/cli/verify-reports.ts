/**
 * Verifying artifacts for the CLI: one after the other with a progress bar,
 * and each report in its `--json` form. Shared by `invocache verify` and
 * `invocache demo`, so neither command imports the other.
 */
import { type TrustedKey, type VerifyReport, verifyStamp } from "../provenance/index.js";
import type { Io } from "./io.js";
import { progress } from "./progress.js";

/**
 * The `--json` form of one artifact's verification (docs/cli.md).
 *
 * @example
 * verifyRow(await verifyStamp("out/plan.md")).stamps[0]?.replayed // false
 */
export function verifyRow(r: VerifyReport) {
  return {
    artifact: r.artifact,
    stampPath: r.stampPath,
    ok: r.ok,
    digest: r.digest ?? null,
    problems: r.problems,
    ignored: r.ignored,
    trust: r.trust ?? null,
    stamps: r.stamps.map((s) => ({
      line: s.line,
      ok: s.ok,
      id: s.id ?? null,
      invocationId: s.invocationId ?? null,
      replayed: s.replayed ?? null,
      signed: s.signed,
      signatures: s.signatures,
      trustedBy: s.trustedBy ?? null,
      problems: s.problems,
    })),
  };
}

/**
 * Verify artifacts one after the other with a progress bar (on a terminal).
 *
 * @example
 * const reports = await verifyAll(io, ["out/plan.md"], {});
 */
export async function verifyAll(
  io: Io,
  artifacts: readonly string[],
  opts: { ignoreForeign?: boolean; trust?: readonly TrustedKey[] | undefined },
): Promise<VerifyReport[]> {
  const bar = progress(io, "verifying", artifacts.length);
  const reports: VerifyReport[] = [];
  try {
    for (const artifact of artifacts) {
      reports.push(
        await verifyStamp(artifact, {
          ...(opts.ignoreForeign ? { foreign: "ignore" as const } : {}),
          ...(opts.trust === undefined ? {} : { trust: opts.trust }),
        }),
      );
      bar.tick();
    }
  } finally {
    bar.done();
  }
  return reports;
}
