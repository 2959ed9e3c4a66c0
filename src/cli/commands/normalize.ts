/**
 * `invocache normalize <file|->`: the text as identities see it, and with
 * `--explain` which rules fired where.
 */
import { explainNormalization, type NormalizeOptions } from "../../normalize/index.js";
import { parseCommandArgs, sizeOption } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { oneLine, plural, renderTable } from "../format.js";
import { DEFAULT_MAX_INPUT_BYTES, readText } from "../input.js";

const OPTIONS = {
  explain: { type: "boolean" },
  project: { type: "string" },
  home: { type: "string" },
  tmp: { type: "string", multiple: true },
  root: { type: "string", multiple: true },
  "max-bytes": { type: "string" },
} as const;

/**
 * @example
 * // invocache normalize prompt.txt --project "$PWD" --explain
 */
export const normalizeCommand: Command = {
  name: "normalize",
  help: `Usage: invocache normalize <file|-> [--explain] [--project DIR] [--home DIR] [--tmp DIR]... [--root NAME=DIR]... [--max-bytes SIZE] [--json]

Print the text as invocache hashes it: Unicode NFC, checkout/home/tmp paths
as {project}/{home}/{tmp}, UUIDs as {uuid}, ISO datetimes and epoch millis as
{timestamp}, whitespace runs collapsed (docs/normalization.md).

Options:
  --explain          after the text, list every replacement: rule, position (in the
                     whitespace-collapsed text), what was there and what replaced it
  --project DIR      the run's project root, replaced by {project}
  --home DIR         the home directory (default: yours), replaced by {home}
  --tmp DIR          a temporary directory (default: the system's), replaced by {tmp}; repeatable
  --root NAME=DIR    an extra named root, replaced by {NAME}; repeatable
  --max-bytes SIZE   read at most SIZE (default 64MiB; e.g. 256MiB): a larger input is refused
  --json             {"output", "counts", "matches": [{"rule", "start", "end", "text", "replacement"}]}
  -h, --help         this help

Examples:
  invocache normalize prompt.txt
  echo "Fix $PWD/src/a.ts at $(date -Iseconds)" | invocache normalize - --project "$PWD" --explain
  invocache normalize prompt.txt --root cache=/var/cache/ci --json
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("normalize", argv, OPTIONS, {
      min: 1,
      max: 1,
      names: "<file or ->",
    });
    const maxBytes =
      values["max-bytes"] === undefined
        ? DEFAULT_MAX_INPUT_BYTES
        : sizeOption("max-bytes", values["max-bytes"]);
    const text = await readText(positionals[0]!, io, {
      maxBytes,
      fix: "pass --max-bytes with a larger size (e.g. --max-bytes 256MiB) if it really is one prompt",
    });
    const opts: NormalizeOptions = {};
    if (values.project !== undefined) opts.projectPath = values.project;
    if (values.home !== undefined) opts.homeDir = values.home;
    if (values.tmp !== undefined) opts.tmpDirs = values.tmp;
    if (values.root !== undefined) opts.roots = parseRoots(values.root);
    let report: ReturnType<typeof explainNormalization>;
    try {
      report = explainNormalization(text, opts);
    } catch (error) {
      // Bad roots (e.g. "/") are refused by the normalizer with a TypeError/RangeError.
      throw new UsageError(String((error as Error).message).split("\n")[0] ?? "", { cause: error });
    }
    if (values.json) {
      printJson(io, { output: report.output, counts: report.counts, matches: report.matches });
      return EXIT.ok;
    }
    io.out(`${report.output}\n`);
    if (!values.explain) return EXIT.ok;
    const fired = Object.entries(report.counts);
    const s = io.style;
    io.out(
      `\n${s.bold(fired.length === 0 ? "No rule fired: the text is already normalized." : `${plural(fired.length, "rule")} fired: ${fired.map(([r, n]) => `${r} ×${n}`).join(", ")}`)}\n`,
    );
    if (report.matches.length > 0) {
      io.out("\n");
      io.out(
        renderTable(
          ["rule", "at", "was", "now"],
          report.matches.map((m) => [
            m.rule,
            `${m.start}–${m.end}`,
            oneLine(m.text, 60),
            m.replacement,
          ]),
          { indent: "  ", headerStyle: s.dim },
        ),
      );
    }
    const whole: string[] = [];
    if (report.counts["unicode-nfc"]) whole.push("unicode-nfc: the text was not in NFC form");
    if (report.counts.whitespace) {
      whole.push("whitespace: runs of whitespace became one space, the ends were trimmed");
    }
    if (whole.length > 0) io.out(`\n${whole.map((w) => `  ${w}\n`).join("")}`);
    if (report.matches.length > 0) {
      io.out(s.dim("\n  Positions are in the text after whitespace was collapsed.\n"));
    }
    return EXIT.ok;
  },
};

function parseRoots(specs: readonly string[]): Record<string, string> {
  const roots: Record<string, string> = {};
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    if (eq <= 0 || eq === spec.length - 1) {
      throw new UsageError(
        `--root ${JSON.stringify(spec)} must be NAME=DIR, e.g. --root cache=/var/cache/ci`,
      );
    }
    roots[spec.slice(0, eq)] = spec.slice(eq + 1);
  }
  return roots;
}
