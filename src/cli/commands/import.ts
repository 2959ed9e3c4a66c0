/**
 * `invocache import FILE…`: bring recordings made with other tools (VCR /
 * vcrpy cassettes, Polly.js HAR files, nock.back fixtures, aimock fixture
 * files) into a store or a cassette, each model call under the identity
 * createFetch gives it (src/import).
 */
import {
  checkImportFormat,
  type ImportFile,
  ImportFileError,
  type ImportItem,
  importFiles,
  readImportFile,
} from "../../import/index.js";
import { locateSource, openSourceStore, SourceError } from "../../source/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import type { Io } from "../io.js";

const OPTIONS = {
  store: { type: "string" },
  cassette: { type: "string" },
  namespace: { type: "string" },
  from: { type: "string" },
  "dry-run": { type: "boolean", short: "n" },
} as const;

/**
 * @example
 * // invocache import tests/cassettes/*.yaml --cassette cassettes/imported.yaml
 */
export const importCommand: Command = {
  name: "import",
  help: `Usage: invocache import FILE... (--store URL | --cassette PATH) [--from vcr|har|nock|aimock] [--namespace NS] [--dry-run] [--json]

Import recordings made with other tools. Each recorded HTTP call to a model
API is sent through createFetch with the recorded answer standing in for the
provider, so it is stored under exactly the identity createFetch (and the
proxy) give that request, redacted like any recording, and replays at once.

The format is told from each file (--from names it):
  vcr      VCR / vcrpy YAML cassettes (interactions: request, response)
  har      HAR files, as Polly.js's fs persister writes them (recording.har)
  nock     nock.back JSON fixtures (nock's recorder, output_objects)
  aimock   aimock fixture files: read, but every fixture is skipped (a
           fixture keeps a match rule, not the request that was sent)

Skipped, with the reason, never half-imported: requests that are not model
calls (not a JSON POST with messages/input/contents…), answers createFetch
never stores (non-2xx, truncated, in-band errors, unfinished streams) and
bodies that cannot be decoded exactly. An identity the destination already
holds is kept, never overwritten ("exists"). The calls of one file form one
run: a request asked twice is occurrence 0, then 1.

Options:
  --store URL        the destination store (sqlite://…, redis://…, postgres://…)
  --cassette PATH    the destination cassette file (.yaml), created if missing
  --from FORMAT      vcr, har, nock or aimock, for every FILE
  --namespace NS     the recorder namespace (default: default)
  -n, --dry-run      report what would be imported; write nothing
  --json             {"dryRun", "counts": {"imported", "exists", "skipped", "failed"},
                      "items": [{"file", "where", "request", "outcome", "reason", "id", "occurrence", "key"}]}
  -h, --help         this help

Exit status: 0 when every call was imported, already there or skipped; 1 when
a write failed.

Examples:
  invocache import tests/cassettes/test_chat.yaml --cassette cassettes/imported.yaml
  invocache import recordings/*/recording.har --store sqlite://.invocache/cache.sqlite --dry-run
  invocache import fixtures/openai.json --from nock --cassette cassettes/nock.yaml --json
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("import", argv, OPTIONS, {
      min: 1,
      max: Number.POSITIVE_INFINITY,
      names: "FILE (one or more recordings to import)",
    });
    if (values.store === undefined && values.cassette === undefined) {
      throw new UsageError(
        "import: say where to import to with --store URL or --cassette PATH; see `invocache import --help`",
      );
    }
    const dryRun = values["dry-run"] === true;
    let files: ImportFile[];
    try {
      const from = values.from === undefined ? undefined : checkImportFormat(values.from);
      files = positionals.map((file) => readImportFile(file, from));
    } catch (error) {
      if (error instanceof ImportFileError) throw new UsageError(error.message);
      throw error;
    }
    let store: ReturnType<typeof openSourceStore>;
    try {
      const location = locateSource(
        { store: values.store, cassette: values.cassette },
        { missing: "create" },
      );
      if (location.kind === "cassette" && location.folder) {
        throw new UsageError(
          `import: --cassette ${values.cassette} is a folder; name one cassette file (.yaml) to import into`,
        );
      }
      store = openSourceStore(location);
    } catch (error) {
      if (error instanceof SourceError) throw new UsageError(error.message);
      throw error;
    }
    let report: Awaited<ReturnType<typeof importFiles>>;
    try {
      report = await importFiles(files, {
        store,
        dryRun,
        ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
        env: io.env,
      });
    } finally {
      await store.close();
    }
    const code = report.counts.failed > 0 ? EXIT.failed : EXIT.ok;
    if (values.json) {
      printJson(io, { dryRun, counts: report.counts, items: report.items });
      return code;
    }
    printReport(io, report.items, dryRun);
    const c = report.counts;
    const verb = dryRun ? "would import" : "imported";
    io.out(
      `${verb} ${c.imported}, already there ${c.exists}, skipped ${c.skipped}, failed ${c.failed} (${store.url})\n`,
    );
    return code;
  },
};

function printReport(io: Io, items: readonly ImportItem[], dryRun: boolean): void {
  const s = io.style;
  const label: Record<ImportItem["outcome"], string> = {
    imported: s.green(dryRun ? "would import" : "imported"),
    exists: s.yellow("exists"),
    skipped: s.dim("skipped"),
    failed: s.red("failed"),
  };
  let file: string | undefined;
  for (const item of items) {
    if (item.file !== file) {
      file = item.file;
      io.out(`${file}\n`);
    }
    const what = item.request ?? "";
    const id = item.id === undefined ? "" : ` ${item.id.slice(0, 12)}#${item.occurrence ?? 0}`;
    io.out(`  ${label[item.outcome]}  ${item.where} ${what}${id}\n`);
    if (item.reason !== undefined && item.outcome !== "imported") io.out(`      ${item.reason}\n`);
  }
}
