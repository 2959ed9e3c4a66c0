/**
 * `runCli(argv, io)`: dispatch to a command and turn every outcome into an
 * exit code and, on failure, one line on stderr that says what to do (plus a
 * JSON error object on stdout under `--json`). Stack traces only with
 * `INVOCACHE_DEBUG=1`.
 */
import { AmbiguousIdError, InvocacheError } from "../errors.js";
import { closest } from "./args.js";
import type { Command, CommandEntry } from "./command.js";
import { COMMANDS } from "./commands/index.js";
import { CliError, EXIT, type ExitCode, UsageError } from "./errors.js";
import type { Io } from "./io.js";
import { packageVersion } from "./package-version.js";

/**
 * The text of `invocache --help`.
 *
 * @example
 * io.out(mainHelp());
 */
export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: invocache <command> [options]

Record-and-replay cache for LLM agent pipelines: inspect, explain, prune and
verify what it stored, without writing code.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

Every command takes --help (with examples) and --json (stable shapes, docs/cli.md).
Store commands read --store URL (default: sqlite://.invocache/cache.sqlite under the
working directory, opened read-only unless the command writes) or --cassette PATH (a
cassette or a folder of them), and resolve unique id prefixes (8+ hex) like git.

Exit codes:
  0  ok
  1  verification failed, a miss, not found or ambiguous, or the operation failed
  2  usage error: unknown command or option, missing or malformed argument, an input
     that does not exist

Environment:
  NO_COLOR, FORCE_COLOR=0   no colors (colors are used only on a terminal anyway)
  INVOCACHE_DEBUG=1         print stack traces of unexpected errors

Start with: invocache demo
Shell completion: source <(invocache completion bash)   (or zsh; fish: see its --help)
`;
}

/**
 * Run the command line `argv` (without `node` and the script) and resolve to
 * the exit code. Never throws.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIo());
 */
export async function runCli(argv: readonly string[], io: Io): Promise<ExitCode> {
  const json = argv.includes("--json");
  try {
    const [name, ...rest] = argv;
    if (name === undefined || name === "--help" || name === "-h" || name === "help") {
      const topic = name === "help" ? rest[0] : undefined;
      if (topic !== undefined) return help(io, await findCommand(topic).load());
      io.out(mainHelp());
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === "--version" || name === "-v" || name === "version") {
      const version = packageVersion();
      io.out(json ? `${JSON.stringify({ version })}\n` : `${version}\n`);
      return EXIT.ok;
    }
    const command = await findCommand(name).load();
    const dashdash = rest.indexOf("--");
    const flags = dashdash === -1 ? rest : rest.slice(0, dashdash);
    if (flags.includes("--help") || flags.includes("-h")) return help(io, command);
    return await command.run(rest, io);
  } catch (error) {
    return report(io, error, json);
  }
}

function help(io: Io, command: Command): ExitCode {
  io.out(command.help);
  return EXIT.ok;
}

/** Other tools' words for our commands: no edit distance finds `rm` from `delete`. */
const SYNONYMS: Readonly<Record<string, string>> = {
  delete: "rm",
  del: "rm",
  remove: "rm",
  list: "ls",
  cat: "show",
  get: "show",
  inspect: "show",
  serve: "view",
  ui: "view",
  clean: "prune",
  gc: "prune",
};

function findCommand(name: string): CommandEntry {
  const command = COMMANDS.find((c) => c.name === name);
  if (command !== undefined) return command;
  if (name.startsWith("-")) {
    throw new UsageError(
      `${name} must come after a command, e.g. invocache ls ${name}; see \`invocache --help\``,
    );
  }
  const near =
    SYNONYMS[name.toLowerCase()] ??
    closest(
      name,
      COMMANDS.map((c) => c.name),
    );
  throw new UsageError(
    `unknown command ${JSON.stringify(name)}${near === undefined ? "" : ` (did you mean ${near}?)`}; see \`invocache --help\` for the list`,
  );
}

/** Print a failure and return its exit code. */
function report(io: Io, error: unknown, json: boolean): ExitCode {
  const debug = io.env.INVOCACHE_DEBUG === "1";
  let code: string;
  let exitCode: ExitCode;
  let message: string;
  let details: readonly string[] = [];
  let data: Record<string, unknown> = {};
  if (error instanceof CliError) {
    ({ code, exitCode, message, details } = error);
    data = { ...error.data };
  } else if (error instanceof InvocacheError && error.code === "ERR_REPLAY_MISS") {
    // A ReplayMissError (not imported: run.ts stays light): the report is worth every line.
    code = error.code;
    exitCode = EXIT.failed;
    [message = "", ...details] = error.message.split("\n");
  } else if (error instanceof AmbiguousIdError) {
    code = error.code;
    exitCode = EXIT.failed;
    [message = "", ...details] = error.message.split("\n");
    data = { candidates: error.candidates };
  } else if (error instanceof InvocacheError) {
    code = error.code;
    exitCode = EXIT.failed;
    message = oneLine(error.message);
  } else {
    code = "ERR_INTERNAL";
    exitCode = EXIT.failed;
    message = `unexpected error: ${oneLine(String((error as Error)?.message ?? error))}${debug ? "" : " (run with INVOCACHE_DEBUG=1 for the stack trace, and report it if it looks like a bug)"}`;
  }
  message = message.replace(/^invocache:\s*/, "");
  const s = io.errStyle;
  io.err(`${s.red("invocache:")} ${message}\n`);
  for (const line of details) io.err(`${line}\n`);
  if (debug && error instanceof Error && error.stack !== undefined) io.err(`${error.stack}\n`);
  if (json) {
    io.out(
      `${JSON.stringify({ error: { code, message, exitCode, ...(details.length > 0 ? { details } : {}), ...data } }, null, 2)}\n`,
    );
  }
  return exitCode;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
