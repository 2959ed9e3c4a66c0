/**
 * `invocache verify <artifact>…`: check artifacts against their stamps.
 */
import { type VerifyReport, verifyStamp } from "../../provenance/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT } from "../errors.js";
import { plural } from "../format.js";
import type { Io } from "../io.js";
import { progress } from "../progress.js";

const OPTIONS = { "ignore-foreign": { type: "boolean" } } as const;

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
    stamps: r.stamps.map((s) => ({
      line: s.line,
      ok: s.ok,
      id: s.id ?? null,
      invocationId: s.invocationId ?? null,
      replayed: s.replayed ?? null,
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
  opts: { ignoreForeign?: boolean },
): Promise<VerifyReport[]> {
  const bar = progress(io, "verifying", artifacts.length);
  const reports: VerifyReport[] = [];
  try {
    for (const artifact of artifacts) {
      reports.push(await verifyStamp(artifact, opts.ignoreForeign ? { foreign: "ignore" } : {}));
      bar.tick();
    }
  } finally {
    bar.done();
  }
  return reports;
}

/**
 * @example
 * // invocache verify out/*.md
 */
export const verifyCommand: Command = {
  name: "verify",
  help: `Usage: invocache verify <artifact>... [--ignore-foreign] [--json]

For each artifact, check every line of <artifact>.intoto.jsonl: the artifact's
sha256 is the stamped subject, the stamped manifest hashes to the stamped
identity, and the parameters and dependencies are the ones that manifest
gives (docs/provenance.md). Exits 1 when any artifact fails or has no stamp.

Options:
  --ignore-foreign   skip lines that are other tools' attestations instead of failing
  --json             {"ok", "artifacts": [{"artifact", "stampPath", "ok", "digest", "problems",
                     "ignored", "stamps": [{"line", "ok", "id", "invocationId", "replayed", "problems"}]}]}
  -h, --help         this help

Examples:
  invocache verify out/plan.md
  invocache verify .invocache/demo/*.md .invocache/demo/*.ts
  invocache verify dist/app.js --json | jq '.artifacts[].problems'
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("verify", argv, OPTIONS, {
      min: 1,
      max: Number.POSITIVE_INFINITY,
      names: "<artifact> (one or more files)",
    });
    const reports = await verifyAll(io, positionals, {
      ignoreForeign: values["ignore-foreign"] === true,
    });
    const ok = reports.every((r) => r.ok);
    if (values.json) {
      printJson(io, { ok, artifacts: reports.map(verifyRow) });
      return ok ? EXIT.ok : EXIT.failed;
    }
    const s = io.style;
    for (const r of reports) {
      const ids = [...new Set(r.stamps.map((x) => x.id?.slice(0, 12)).filter(Boolean))];
      io.out(
        `${r.ok ? s.green("ok  ") : s.red("FAIL")}  ${r.artifact}  ${s.dim(`${plural(r.stamps.length, "stamp")}${ids.length > 0 ? ` · ${ids.join(", ")}` : ""}`)}\n`,
      );
      for (const p of r.problems) io.out(`      ${p}\n`);
    }
    if (reports.length > 1) {
      const failed = reports.filter((r) => !r.ok).length;
      io.out(
        failed === 0
          ? s.green(`All ${reports.length} artifacts verified.\n`)
          : s.red(`${failed} of ${reports.length} artifacts failed verification.\n`),
      );
    }
    return ok ? EXIT.ok : EXIT.failed;
  },
};
