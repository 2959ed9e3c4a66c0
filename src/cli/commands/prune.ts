/**
 * `invocache prune`: drop entries from a store (older than a duration) or a
 * cassette (older than a duration, or listed as unused by a test run).
 */
import { parseMaxAge } from "../../cassette/index.js";
import { isIdentityPrefix, shortId } from "../../identity/index.js";
import { isEntryKey } from "../../store/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { plural, renderTable, shortTime } from "../format.js";
import { readText } from "../input.js";
import { progress } from "../progress.js";
import { type EntryRecord, openSource, SOURCE_OPTIONS, type SourceProblem } from "../source.js";
import { warnProblems } from "./ls.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  "older-than": { type: "string" },
  unused: { type: "string" },
  "dry-run": { type: "boolean", short: "n" },
} as const;

/**
 * @example
 * // invocache prune --older-than 30d --dry-run
 */
export const pruneCommand: Command = {
  name: "prune",
  help: `Usage: invocache prune --older-than DURATION [--store URL | --cassette PATH] [--namespace NS] [--dry-run] [--json]
       invocache prune --cassette PATH --unused LIST [--dry-run] [--json]

Remove recorded entries. Run records and values that are not entries stay.

  --older-than DURATION   entries recorded longer ago than DURATION: 90d, 12h, 30m, 45s,
                          2w, 500ms (a store or a cassette)
  --unused LIST           a cassette's entries named in LIST (a file, or - for stdin): one
                          store key (default:e:<id>:<n>) or id prefix (8+ hex) per line, as
                          the "not used" report of invocache/vitest prints them ("  - key")
Both can be given: an entry is removed when it matches either.

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them (each rewritten once,
                     atomically, under its lock)
  --namespace NS     only this namespace
  -n, --dry-run      list what would be removed; change nothing
  --json             {"source", "dryRun", "removed": [{"key", "id", "recordedAt"}], "kept"}
  -h, --help         this help

Examples:
  invocache prune --older-than 30d --dry-run
  invocache prune --older-than 12h --store redis://127.0.0.1:6379 --namespace ci
  npx vitest run 2> report.txt; grep -- '  - ' report.txt | invocache prune --cassette cassettes/x.yaml --unused -
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("prune", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const olderThan = values["older-than"];
    if (olderThan === undefined && values.unused === undefined) {
      throw new UsageError(
        "prune: say what to remove with --older-than DURATION (e.g. 30d) or, for a cassette, --unused LIST; see `invocache prune --help`",
      );
    }
    if (values.unused !== undefined && values.cassette === undefined) {
      throw new UsageError(
        "prune: --unused applies to a cassette (--cassette PATH); a store keeps no usage, prune it with --older-than",
      );
    }
    let maxAgeMs: number | undefined;
    if (olderThan !== undefined) {
      try {
        maxAgeMs = parseMaxAge(olderThan);
      } catch {
        throw new UsageError(
          `--older-than must be a duration such as 30d, 12h, 45s; got ${JSON.stringify(olderThan)}`,
        );
      }
    }
    const unused =
      values.unused === undefined ? undefined : parseUnused(await readText(values.unused, io));
    const source = openSource(values, io, { write: values["dry-run"] !== true });
    try {
      // One entry at a time: only what is to be removed is kept, a few fields of each.
      const now = Date.now();
      const doomed: Doomed[] = [];
      const problems: SourceProblem[] = [];
      let seen = 0;
      const bar = progress(io, `reading ${source.url}`);
      try {
        await source.scan(
          {
            entry: (r) => {
              seen++;
              const old =
                maxAgeMs !== undefined && now - Date.parse(r.entry.meta.recordedAt) > maxAgeMs;
              if (old || unused?.(r) === true) doomed.push(doomedOf(r));
            },
            problem: (p) => problems.push(p),
          },
          () => bar.tick(),
        );
      } finally {
        bar.done();
      }
      doomed.sort((a, b) => a.recordedAt.localeCompare(b.recordedAt) || a.key.localeCompare(b.key));
      if (!values.json) warnProblems(io, problems);
      const dryRun = values["dry-run"] === true;
      let removedKeys: string[] = [];
      if (!dryRun && doomed.length > 0) {
        const steps =
          source.kind === "store" ? doomed.length : new Set(doomed.map((r) => r.cassette)).size;
        const bar = progress(io, "pruning", steps);
        try {
          removedKeys = await source.remove(doomed, () => bar.tick());
        } finally {
          bar.done();
        }
      }
      const removedSet = new Set(dryRun ? doomed.map((r) => r.key) : removedKeys);
      const removed = doomed.filter((r) => removedSet.has(r.key));
      const kept = seen - removed.length;
      if (values.json) {
        printJson(io, {
          source: source.url,
          dryRun,
          removed: removed.map((r) => ({
            key: r.key,
            id: r.id,
            recordedAt: r.recordedAt,
          })),
          kept,
        });
        return EXIT.ok;
      }
      const s = io.style;
      if (removed.length === 0) {
        io.out(`Nothing to prune in ${source.url} (${plural(kept, "entry", "entries")} kept).\n`);
        return EXIT.ok;
      }
      io.out(
        renderTable(
          ["id", "occ", "namespace", "role", "recorded"],
          removed.map((r) => [
            s.cyan(shortId(r.id)),
            String(r.occurrence),
            r.namespace,
            r.role,
            shortTime(r.recordedAt),
          ]),
          { headerStyle: s.dim, align: ["left", "right"] },
        ),
      );
      io.out(
        `${dryRun ? s.yellow("Would remove") : "Removed"} ${plural(removed.length, "entry", "entries")} from ${source.url}; ${kept} kept.${dryRun ? " (dry run: nothing changed)" : ""}\n`,
      );
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};

/** What prune keeps of an entry it will remove (not the entry: a store may hold millions). */
interface Doomed {
  key: string;
  id: string;
  occurrence: number;
  namespace: string;
  role: string;
  recordedAt: string;
  cassette?: string;
}

function doomedOf(r: EntryRecord): Doomed {
  return {
    key: r.key,
    id: r.id,
    occurrence: r.occurrence,
    namespace: r.namespace,
    role: r.entry.manifest.role,
    recordedAt: r.entry.meta.recordedAt,
    ...(r.cassette === undefined ? {} : { cassette: r.cassette }),
  };
}

/** A predicate over entries from an unused-entries list (keys or id prefixes, one per line). */
function parseUnused(text: string): (r: EntryRecord) => boolean {
  const keys = new Set<string>();
  const prefixes: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim().replace(/^-\s+/, "");
    if (line === "" || line.startsWith("#")) return;
    if (isEntryKey(line)) keys.add(line);
    else if (isIdentityPrefix(line)) prefixes.push(line.toLowerCase());
    else {
      throw new UsageError(
        `--unused line ${i + 1}: ${JSON.stringify(line.slice(0, 80))} is neither an entry key (ns:e:<id>:<n>) nor an id prefix`,
      );
    }
  });
  return (r) => keys.has(r.key) || prefixes.some((p) => r.id.startsWith(p));
}
