/**
 * `invocache migrate-store`: give a store made before stored metadata (or
 * written by an older invocache) the metadata beside each value that `ls`,
 * `stats`, `prune` and the viewer answer from without reading the values
 * (docs/performance.md, "Scale"). Never done implicitly: on SQLite it adds
 * columns and builds indexes, which reads the whole table once.
 */
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { plural } from "../format.js";
import { progress } from "../progress.js";
import { openSource } from "../source.js";

const OPTIONS = {
  store: { type: "string" },
  cassette: { type: "string" },
} as const;

/**
 * @example
 * // invocache migrate-store --store sqlite://.invocache/cache.sqlite
 */
export const migrateStoreCommand: Command = {
  name: "migrate-store",
  help: `Usage: invocache migrate-store [--store URL] [--json]

Give every value of a store its stored metadata (kind, namespace, role, model,
recorded time, size…), kept beside the value so that ls, stats, prune and the
viewer answer without reading the values. Stores created by this version keep
it from the first write; a store created before (or written by an older
invocache) needs this once. Safe to run while other processes use the store,
and again: it fills only what is missing. Nothing recorded is changed.

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --json             {"source", "filled", "supported"}
  -h, --help         this help

Examples:
  invocache migrate-store
  invocache migrate-store --store postgres://ci@db.internal/invocache
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("migrate-store", argv, OPTIONS, {
      min: 0,
      max: 0,
      names: "",
    });
    if (values.cassette !== undefined) {
      throw new UsageError("migrate-store: a cassette needs no migration (pass --store URL)");
    }
    const source = openSource({ store: values.store }, io, { write: true });
    try {
      const bar = progress(io, `migrating ${source.url}`);
      let filled: number | undefined;
      try {
        filled = await source.migrateMeta?.(() => bar.tick());
      } finally {
        bar.done();
      }
      if (values.json) {
        printJson(io, { source: source.url, filled: filled ?? 0, supported: filled !== undefined });
        return EXIT.ok;
      }
      if (filled === undefined) {
        io.out(`${source.url} keeps no stored metadata (nothing to migrate).\n`);
      } else {
        io.out(
          `${source.url}: stored metadata added to ${plural(filled, "value")}; ls, stats and prune now answer from it.\n`,
        );
      }
      return EXIT.ok;
    } finally {
      await source.close();
    }
  },
};
