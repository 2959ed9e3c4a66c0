/**
 * `invocache rm <prefix>`: drop one recorded invocation (every occurrence
 * and namespace of it, or the ones `--namespace`/`--occurrence` select),
 * named by a unique id prefix as `show` takes it. An ambiguous prefix lists
 * the candidates and removes nothing; `--dry-run` says what would go.
 */
import { shortId } from "../../identity/index.js";
import { valueDigest } from "../../store/index.js";
import { integerOption, parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { CliError, EXIT } from "../errors.js";
import { plural, shortTime } from "../format.js";
import { resolveEntries } from "../resolve.js";
import { openSource, SOURCE_OPTIONS } from "../source.js";
import { readAll, warnProblems } from "./ls.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  occurrence: { type: "string" },
  "dry-run": { type: "boolean", short: "n" },
} as const;

/**
 * @example
 * // invocache rm 3f2a9c0d --dry-run
 */
export const rmCommand: Command = {
  name: "rm",
  help: `Usage: invocache rm <prefix> [--store URL | --cassette PATH] [--namespace NS] [--occurrence N] [--dry-run] [--json]

Remove the entry (every occurrence and namespace of it) whose identity
starts with <prefix>: at least 8 hex characters, unique like a git commit
prefix, as \`invocache show\` takes it and the viewer shows it. An ambiguous
prefix lists the candidates, removes nothing and exits 1. The next run
records the call again (mode auto or record) or misses it (replay).

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them (rewritten atomically, under its lock)
  --namespace NS     only this namespace
  --occurrence N     only this occurrence
  -n, --dry-run      list what would be removed; change nothing
  --json             {"source", "dryRun", "id", "removed": [{"key", "namespace", "occurrence", "recordedAt"}]}
  -h, --help         this help

Examples:
  invocache rm 3f2a9c0d --dry-run
  invocache rm 3f2a9c0d1b7e --cassette cassettes/test/planner.yaml
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("rm", argv, OPTIONS, {
      min: 1,
      max: 1,
      names: "<prefix> (8+ hex characters of an id)",
    });
    const occurrence =
      values.occurrence === undefined ? undefined : integerOption("occurrence", values.occurrence);
    const dryRun = values["dry-run"] === true;
    const source = openSource(values, io, { write: !dryRun });
    try {
      const contents = await readAll(source, io);
      if (!values.json) warnProblems(io, contents.problems);
      const { id, records: all } = resolveEntries(positionals[0]!, contents.entries, source);
      const chosen = all.filter((r) => occurrence === undefined || r.occurrence === occurrence);
      if (chosen.length === 0) {
        throw new CliError(
          "ERR_NOT_FOUND",
          `${shortId(id)} has no occurrence ${occurrence} (recorded: ${all.map((r) => r.occurrence).join(", ")}); nothing removed`,
        );
      }
      let removed = chosen;
      if (!dryRun) {
        // Only if still the value read: one re-recorded meanwhile is kept.
        const keys = new Set(
          await source.remove(
            chosen.map((r) => ({
              key: r.key,
              digest: valueDigest(r.value),
              ...(r.cassette === undefined ? {} : { cassette: r.cassette }),
            })),
          ),
        );
        removed = chosen.filter((r) => keys.has(r.key));
      }
      const rows = removed.map((r) => ({
        key: r.key,
        namespace: r.namespace,
        occurrence: r.occurrence,
        recordedAt: r.entry.meta.recordedAt,
      }));
      if (values.json) {
        printJson(io, { source: source.url, dryRun, id, removed: rows });
        return EXIT.ok;
      }
      const verb = dryRun ? "would remove" : "removed";
      io.out(
        `${verb} ${plural(rows.length, "entry", "entries")} of ${shortId(id)} from ${source.url}\n`,
      );
      for (const r of rows) io.out(`  ${r.key}  ${shortTime(r.recordedAt)}\n`);
      const kept = chosen.length - removed.length;
      if (kept > 0)
        io.out(`kept ${plural(kept, "entry", "entries")} re-recorded since they were read\n`);
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};
