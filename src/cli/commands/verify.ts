/**
 * `invocache verify <artifact>…`: check artifacts against their stamps.
 */
import { resolve } from "node:path";
import { readTrustedKey, type TrustedKey, type VerifyReport } from "../../provenance/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { plural } from "../format.js";
import { verifyAll, verifyRow } from "../verify-reports.js";

const OPTIONS = {
  "ignore-foreign": { type: "boolean" },
  trust: { type: "string", multiple: true },
} as const;

/**
 * How an artifact's stamps are signed, in a few words.
 *
 * @example
 * signing(report) // "signed by 5b0c1d2e3f4a (trusted)", "unsigned", "2 signed (not checked), 1 unsigned"
 */
export function signing(r: VerifyReport): string {
  const signed = r.stamps.filter((x) => x.signed);
  const unsigned = r.stamps.length - signed.length;
  if (signed.length === 0) return r.stamps.length === 0 ? "no stamp" : "unsigned";
  const by = [...new Set(signed.map((x) => x.trustedBy?.slice(0, 12)).filter(Boolean))];
  const head =
    r.trust === undefined
      ? `${signed.length === r.stamps.length ? "signed" : `${signed.length} signed`} (signatures not checked: no --trust)`
      : by.length > 0
        ? `signed by ${by.join(", ")} (trusted)`
        : "not signed by a trusted key";
  return unsigned > 0 ? `${head}, ${unsigned} unsigned` : head;
}

/**
 * @example
 * // invocache verify out/*.md
 */
export const verifyCommand: Command = {
  name: "verify",
  help: `Usage: invocache verify <artifact>... [--trust PUBKEY]... [--ignore-foreign] [--json]

For each artifact, check every line of <artifact>.intoto.jsonl: the artifact's
sha256 is the stamped subject, the stamped manifest hashes to the stamped
identity, and the parameters and dependencies are the ones that manifest
gives (docs/provenance.md). Signed stamps are DSSE envelopes: with --trust,
every stamp must carry a signature that verifies with one of the given
public keys, and an unsigned stamp or one signed by another key fails.
Without --trust, signatures are not checked; stamps are listed as signed
or unsigned. Exits 1 when any artifact fails or has no stamp.

Options:
  --trust PUBKEY     a PEM public key file whose signatures are trusted (repeat for several)
  --ignore-foreign   skip lines that are other tools' attestations instead of failing
  --json             {"ok", "artifacts": [{"artifact", "stampPath", "ok", "digest", "problems",
                     "ignored", "trust", "stamps": [{"line", "ok", "id", "invocationId", "replayed",
                     "signed", "signatures": [{"keyid", "status"}], "trustedBy", "problems"}]}]}
  -h, --help         this help

Examples:
  invocache verify out/plan.md
  invocache verify .invocache/demo/*.md .invocache/demo/*.ts
  invocache verify dist/app.js --json | jq '.artifacts[].problems'
  invocache verify out/plan.md --trust .invocache/keys/invocache-signing.pub.pem
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("verify", argv, OPTIONS, {
      min: 1,
      max: Number.POSITIVE_INFINITY,
      names: "<artifact> (one or more files)",
    });
    positionals.forEach((p, i) => {
      if (p === "") {
        throw new UsageError(
          `verify: <artifact> ${positionals.length > 1 ? `(argument ${i + 1}) ` : ""}must be a file path, got an empty string; see \`invocache verify --help\``,
        );
      }
    });
    let trust: TrustedKey[] | undefined;
    if (values.trust !== undefined) {
      trust = [];
      for (const file of values.trust) {
        if (file === "")
          throw new UsageError("verify: --trust must be a public key file, got an empty string");
        trust.push(await readTrustedKey(resolve(io.cwd, file)));
      }
    }
    const reports = await verifyAll(io, positionals, {
      ignoreForeign: values["ignore-foreign"] === true,
      trust,
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
        `${r.ok ? s.green("ok  ") : s.red("FAIL")}  ${r.artifact}  ${s.dim(`${plural(r.stamps.length, "stamp")}${ids.length > 0 ? ` · ${ids.join(", ")}` : ""} · ${signing(r)}`)}\n`,
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
