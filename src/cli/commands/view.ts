/**
 * `invocache view`: a local, read-only web viewer of a store or cassettes,
 * or (`--export FILE`) the same views as one self-contained HTML file.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { parseMaxAge } from "../../cassette/index.js";
import { defaultStoreUrl } from "../../store/index.js";
import { exportReport, startViewer } from "../../viewer/index.js";
import { integerOption, parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";

const OPTIONS = {
  store: { type: "string" },
  cassette: { type: "string" },
  port: { type: "string" },
  open: { type: "boolean" },
  export: { type: "string" },
  "max-age": { type: "string" },
  limit: { type: "string" },
  stamps: { type: "string" },
} as const;

/**
 * @example
 * // invocache view --store sqlite://.invocache/cache.sqlite
 */
export const viewCommand: Command = {
  name: "view",
  help: `Usage: invocache view [--store URL | --cassette FILE_OR_DIR] [--port N] [--open]
       invocache view --export report.html [--store URL | --cassette FILE_OR_DIR]

Start a local, read-only web viewer of what was recorded: overview and
search, runs as timelines with their retries and verdicts, entries with the
prompt (templated tokens highlighted), the conversation and the response,
diffs of any two entries (the same field diff as \`invocache explain\`),
logged replay misses, cassettes as a tree. It listens on 127.0.0.1 only
and prints a URL with a one-time token; stop it with Ctrl-C.

With --export it writes the same views as one HTML file that opens offline
and makes no request (attach it to a failed CI build).

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite under the
                     working directory)
  --cassette PATH    a YAML cassette, or a folder of them
  --port N           port on 127.0.0.1 (default: a free one)
  --open             open the URL in the system browser
  --export FILE      write a self-contained HTML report instead of serving
  --limit N          entries given a page in the report (default 500)
  --max-age AGE      mark cassette entries older than AGE (30d, 12h…) as stale
  --stamps DIR       where to look for provenance stamps (*.intoto.jsonl) that
                     reference an entry (default: the store's or the cassettes' folder)
  --json             print {"url"} (or {"path", "bytes", "sections"} with --export)
  -h, --help         this help

Examples:
  invocache view
  invocache view --cassette cassettes --max-age 30d
  invocache view --export report.html
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("view", argv, OPTIONS, { min: 0, max: 0, names: "" });
    if (values.store !== undefined && values.cassette !== undefined)
      throw new UsageError("pass --store or --cassette, not both");
    const location =
      values.cassette !== undefined
        ? { cassette: resolve(io.cwd, values.cassette) }
        : { store: values.store ?? defaultStoreUrl(io.cwd) };
    let maxAgeMs: number | undefined;
    if (values["max-age"] !== undefined) {
      try {
        maxAgeMs = parseMaxAge(values["max-age"]);
      } catch (error) {
        throw new UsageError(`--max-age: ${(error as Error).message}`);
      }
    }
    const limit =
      values.limit === undefined ? undefined : integerOption("limit", values.limit, 1, 100_000);
    const stamps = values.stamps === undefined ? {} : { stamps: resolve(io.cwd, values.stamps) };
    if (values.export !== undefined) {
      const out = resolve(io.cwd, values.export);
      const summary = await exportReport(location, out, {
        ...(limit === undefined ? {} : { limit }),
        ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
        ...stamps,
      });
      if (values.json) printJson(io, summary);
      else
        io.out(
          `Wrote ${values.export}: ${summary.sections} views, ${Math.round(summary.bytes / 1024)} KiB, opens offline.\n`,
        );
      return EXIT.ok;
    }
    const port =
      values.port === undefined ? undefined : integerOption("port", values.port, 0, 65_535);
    const viewer = await startViewer(location, {
      ...(port === undefined ? {} : { port }),
      ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
      ...stamps,
    });
    if (values.json) printJson(io, { url: viewer.url });
    else io.out(`invocache view: ${viewer.url}\n  read-only, on 127.0.0.1 only · Ctrl-C to stop\n`);
    if (values.open) {
      const cmd =
        process.platform === "darwin"
          ? "open"
          : process.platform === "win32"
            ? "explorer"
            : "xdg-open";
      spawn(cmd, [viewer.url], { stdio: "ignore", detached: true })
        .on("error", () => {
          io.err(`invocache view: could not start ${cmd}; open the URL yourself.\n`);
        })
        .unref();
    }
    await new Promise<void>((done) => {
      process.once("SIGINT", done);
      process.once("SIGTERM", done);
    });
    await viewer.close();
    return EXIT.ok;
  },
};
