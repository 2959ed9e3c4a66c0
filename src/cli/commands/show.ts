/**
 * `invocache show <prefix>`: one recorded invocation, every occurrence of it.
 */
import { shortId } from "../../identity/index.js";
import { asModelManifest, asToolManifest } from "../../identity/internal.js";
import { integerOption, parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { CliError, EXIT } from "../errors.js";
import { formatBytes, formatMs } from "../format.js";
import type { Io } from "../io.js";
import { modelLabel } from "../manifest-label.js";
import { resolveEntries } from "../resolve.js";
import { type EntryRecord, openSource, SOURCE_OPTIONS } from "../source.js";
import { readAll, warnProblems } from "./ls.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  occurrence: { type: "string" },
  full: { type: "boolean" },
} as const;

const RESPONSE_LINES = 40;

/**
 * @example
 * // invocache show 3f2a9c0d
 */
export const showCommand: Command = {
  name: "show",
  help: `Usage: invocache show <prefix> [--store URL | --cassette PATH] [--namespace NS] [--occurrence N] [--full] [--json]

Show the entry (or entries: one per occurrence and namespace) whose identity
starts with <prefix>: at least 8 hex characters, unique like a git commit
prefix. An ambiguous prefix lists the candidates and exits 1.

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them, instead of a store
  --namespace NS     only this namespace
  --occurrence N     only this occurrence
  --full             print the whole response (default: its first ${RESPONSE_LINES} lines)
  --json             {"id", "shortId", "entries": [{"key", "namespace", "occurrence", "bytes", "entry"}]}
  -h, --help         this help

Examples:
  invocache show 3f2a9c0d
  invocache show 3f2a9c0d1b7e --cassette cassettes/test/planner.yaml
  invocache show 3f2a9c0d --json | jq .entries[0].entry.response
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("show", argv, OPTIONS, {
      min: 1,
      max: 1,
      names: "<prefix> (8+ hex characters of an id)",
    });
    const occurrence =
      values.occurrence === undefined ? undefined : integerOption("occurrence", values.occurrence);
    const source = openSource(values, io);
    try {
      const contents = await readAll(source, io);
      if (!values.json) warnProblems(io, contents.problems);
      const { id, records: all } = resolveEntries(positionals[0]!, contents.entries, source);
      const records = all.filter((r) => occurrence === undefined || r.occurrence === occurrence);
      if (records.length === 0) {
        throw new CliError(
          "ERR_NOT_FOUND",
          `${shortId(id)} has no occurrence ${occurrence} (recorded: ${all.map((r) => r.occurrence).join(", ")})`,
        );
      }
      if (values.json) {
        printJson(io, {
          id,
          shortId: shortId(id),
          entries: records.map((r) => ({
            key: r.key,
            namespace: r.namespace,
            occurrence: r.occurrence,
            bytes: r.bytes,
            entry: r.entry,
          })),
        });
        return EXIT.ok;
      }
      records.forEach((r, i) => {
        if (i > 0) io.out("\n");
        printEntry(io, r, values.full === true);
      });
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};

function printEntry(io: Io, r: EntryRecord, full: boolean): void {
  const s = io.style;
  const { manifest: m, meta, response } = r.entry;
  const row = (name: string, value: string) => io.out(`  ${s.dim(name.padEnd(10))}  ${value}\n`);
  io.out(`${s.bold("entry")} ${s.cyan(r.key)}\n`);
  row("id", r.id);
  row("role", m.role);
  const label = modelLabel(m);
  row("model", label === "" ? s.dim("(none)") : label);
  row("attempt", String(m.attempt));
  row("occurrence", String(r.occurrence));
  if (m.task !== "") row("task", m.task);
  row("inputs", m.inputs.length === 0 ? s.dim("(none)") : m.inputs.join("\n              "));
  const model = asModelManifest(m);
  if (model?.params !== undefined) row("params", JSON.stringify(model.params));
  row(
    "recorded",
    `${meta.recordedAt} (live call took ${formatMs(meta.durationMs)}; invocache ${meta.invocacheVersion}, normalization v${meta.normalization})`,
  );
  if (meta.parent !== undefined) row("parent", `${meta.parent} (attempt ${m.attempt - 1})`);
  if (meta.verdict !== undefined) {
    const v = meta.verdict;
    const word = v.verdict === "accepted" ? s.green(v.verdict) : s.red(v.verdict);
    row("verdict", `${word}${v.reason === undefined ? "" : `: ${v.reason}`} (${v.at})`);
  }
  // A tool call (docs/tools.md) has arguments where a model call has a prompt.
  const tool = asToolManifest(m);
  if (tool !== undefined)
    io.out(`  ${s.dim("args")}\n${indent(JSON.stringify(tool.args, null, 2))}\n`);
  else io.out(`  ${s.dim("prompt")}\n${indent(model?.prompt ?? "")}\n`);
  const text = JSON.stringify(response, null, 2);
  const lines = text.split("\n");
  io.out(`  ${s.dim(`response (${formatBytes(Buffer.byteLength(JSON.stringify(response)))})`)}\n`);
  const shown = full ? lines : lines.slice(0, RESPONSE_LINES);
  io.out(`${shown.map((l) => `    ${l}`).join("\n")}\n`);
  if (shown.length < lines.length) {
    io.out(s.dim(`    … ${lines.length - shown.length} more lines (--full or --json for all)\n`));
  }
}

function indent(text: string): string {
  // Normalized prompts are one line: wrap them for reading.
  const width = 96;
  const out: string[] = [];
  for (const para of text.split("\n")) {
    let line = "";
    for (const word of para.split(" ")) {
      if (line !== "" && line.length + 1 + word.length > width) {
        out.push(line);
        line = word;
      } else line = line === "" ? word : `${line} ${word}`;
    }
    out.push(line);
  }
  return out.map((l) => `    ${l}`).join("\n");
}
