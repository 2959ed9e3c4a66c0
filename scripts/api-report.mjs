// Checks the published surface against the API reports committed under etc/
// (one per entry point of package.json's "exports"), with API Extractor.
//   node scripts/api-report.mjs          fail when the surface changed (npm test)
//   node scripts/api-report.mjs --update  rewrite the reports (review the diff)
// Needs the declarations of `npm run build` in dist/.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const root = resolve(import.meta.dirname, "..");
const update = process.argv.includes("--update");
const pkg = (await import(join(root, "package.json"), { with: { type: "json" } })).default;

const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === "object" && target.types)
  .map(([subpath, target]) => ({
    name: subpath === "." ? "invocache" : `invocache-${subpath.slice(2).replaceAll("/", "-")}`,
    types: join(root, target.types),
  }));

const scratch = mkdtempSync(join(tmpdir(), "invocache-api-"));
let failed = 0;
try {
  for (const entry of entries) {
    if (!existsSync(entry.types)) {
      console.error(`api-report: ${entry.types} is missing; run npm run build first`);
      process.exit(2);
    }
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: root,
        newlineKind: "lf",
        mainEntryPointFilePath: entry.types,
        compiler: { tsconfigFilePath: join(root, "tsconfig.build.json") },
        apiReport: {
          enabled: true,
          reportFileName: `${entry.name}.api.md`,
          reportFolder: join(root, "etc"),
          reportTempFolder: scratch,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          compilerMessageReporting: { default: { logLevel: "warning" } },
          extractorMessageReporting: {
            default: { logLevel: "none" },
            "ae-forgotten-export": { logLevel: "none" },
          },
          tsdocMessageReporting: { default: { logLevel: "none" } },
        },
      },
      configObjectFullPath: join(root, "api-extractor.json"),
      packageJsonFullPath: join(root, "package.json"),
    });
    const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
    if (result.apiReportChanged && !update) {
      failed++;
      console.error(
        `api-report: the public surface of "${entry.name}" changed. Review it and run: node scripts/api-report.mjs --update`,
      );
    } else if (!result.succeeded) {
      failed++;
      console.error(
        `api-report: API Extractor failed for "${entry.name}" (${result.errorCount} errors)`,
      );
    } else if (
      entry.name === "invocache" &&
      leaksOptionalPeer(join(root, "etc", `${entry.name}.api.md`))
    ) {
      failed++;
    } else {
      console.log(
        `api-report: ${entry.name} ${update && result.apiReportChanged ? "updated" : "unchanged"}`,
      );
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

/**
 * The root's declarations must not import an optional peer: a user without it
 * (and with skipLibCheck off) would get a type error from our .d.ts files.
 */
function leaksOptionalPeer(report) {
  const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter(
    (name) => pkg.peerDependenciesMeta[name].optional,
  );
  const text = readFileSync(report, "utf8");
  const leaked = optional.filter((name) => text.includes(`from '${name}'`));
  for (const name of leaked) {
    console.error(
      `api-report: the root entry's types import the optional peer ${name}; move what needs it behind its own subpath`,
    );
  }
  return leaked.length > 0;
}
