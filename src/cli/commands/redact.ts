/**
 * `invocache redact <cassette>…`: scrub secrets from existing cassettes.
 */
import { statSync } from "node:fs";
import { redactCassette } from "../../cassette/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { plural, renderTable } from "../format.js";
import { progress } from "../progress.js";
import { cassetteFiles } from "../source.js";

const OPTIONS = {
  "dry-run": { type: "boolean", short: "n" },
  check: { type: "boolean" },
} as const;

/**
 * @example
 * // invocache redact cassettes/**\/*.yaml --check
 */
export const redactCommand: Command = {
  name: "redact",
  help: `Usage: invocache redact <cassette|folder>... [--dry-run | --check] [--json]

Find secrets in existing cassettes and replace them by placeholders:
{secret:NAME} for the value of a secret environment variable (OPENAI_API_KEY,
*_TOKEN, *_SECRET…, in any spelling: raw, JSON-escaped, URL-encoded, base64),
{secret:shape} for a known key shape (sk-…, ghp_…, AKIA…) found without one.
Each file is rewritten atomically under its lock; a malformed cassette is
reported and left untouched. A folder stands for every .yaml/.yml under it.
Set the secret variables in the environment so their values can be found.

Options:
  -n, --dry-run   list what would be redacted; change nothing
  --check         like --dry-run, and exit 1 when any secret is found (for CI)
  --json          {"files": [{"file", "written", "found": [{"key", "name", "path", "kind", "form"?}]}]}
  -h, --help      this help

Examples:
  invocache redact cassettes/test/planner.yaml
  invocache redact cassettes/ --check
  OPENAI_API_KEY=sk-… invocache redact cassettes/old.yaml --dry-run --json
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("redact", argv, OPTIONS, {
      min: 1,
      max: Number.POSITIVE_INFINITY,
      names: "<cassette> (one or more cassette files or folders)",
    });
    const dryRun = values["dry-run"] === true || values.check === true;
    const targets = positionals.flatMap((path) => expand(path));
    const bar = progress(io, "redacting", targets.length);
    const files: Array<{ file: string } & Awaited<ReturnType<typeof redactCassette>>> = [];
    try {
      for (const file of targets) {
        files.push({ file, ...(await redactCassette(file, { dryRun })) });
        bar.tick();
      }
    } finally {
      bar.done();
    }
    const total = files.reduce((n, f) => n + f.found.length, 0);
    const code = values.check === true && total > 0 ? EXIT.failed : EXIT.ok;
    if (values.json) {
      printJson(io, { files });
      return code;
    }
    const s = io.style;
    for (const f of files) {
      if (f.found.length === 0) {
        io.out(`${s.green("clean")}  ${f.file}\n`);
        continue;
      }
      const verb = f.written ? s.yellow("redacted") : s.red(dryRun ? "found" : "unchanged");
      io.out(`${verb}  ${f.file}: ${plural(f.found.length, "secret")}\n`);
      io.out(
        renderTable(
          ["secret", "key", "where"],
          f.found.map((x) => [
            `${x.name}${x.form && x.form !== "raw" ? ` (${x.form})` : ""}`,
            x.key,
            x.path,
          ]),
          { indent: "    ", headerStyle: s.dim },
        ),
      );
    }
    if (dryRun && total > 0) {
      io.out(
        `${plural(total, "secret")} found; nothing was changed. Run without ${values.check ? "--check" : "--dry-run"} to redact.\n`,
      );
    }
    return code;
  },
};

/** A cassette path as given, or every cassette under a folder (paths relative as given). */
function expand(path: string): string[] {
  let folder: boolean;
  try {
    folder = statSync(path).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new UsageError(`redact: no such cassette or folder ${path}`);
    }
    throw new CliError(
      "ERR_UNREADABLE",
      `redact: cannot read ${path}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return folder ? cassetteFiles(path) : [path];
}
