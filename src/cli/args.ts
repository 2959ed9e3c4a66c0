/**
 * Argument parsing on Node's built-in `util.parseArgs`, with every parse
 * failure turned into a one-line {@link UsageError} that names the command
 * and its `--help`, and a "did you mean" for near-miss options.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./errors.js";

/** Option definitions in `util.parseArgs` form. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** What {@link parseCommandArgs} returns: typed values and the positionals. */
export interface Parsed<T extends OptionSpec> {
  values: ReturnType<
    typeof parseArgs<{ options: T; allowPositionals: true; strict: true }>
  >["values"];
  positionals: string[];
}

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies OptionSpec;

/**
 * Parse `argv` for `command` against `options` (plus `--json` and `--help`),
 * checking the number of positionals.
 *
 * @throws UsageError for an unknown option, a missing option value, or a
 *   wrong number of arguments.
 * @example
 * const { values, positionals } = parseCommandArgs("id", argv, { manifest: { type: "boolean" } }, { min: 1, max: 1, names: "<request>" });
 */
export function parseCommandArgs<T extends OptionSpec>(
  command: string,
  argv: readonly string[],
  options: T,
  arity: { min: number; max: number; names: string },
): Parsed<T & typeof COMMON_OPTIONS> {
  const all = { ...COMMON_OPTIONS, ...options };
  let parsed: Parsed<T & typeof COMMON_OPTIONS>;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv, all),
      options: all,
      allowPositionals: true,
      strict: true,
    }) as Parsed<T & typeof COMMON_OPTIONS>;
  } catch (error) {
    throw new UsageError(parseFailure(command, error, Object.keys(all)));
  }
  const n = parsed.positionals.length;
  if (n < arity.min) {
    throw new UsageError(`${command}: missing ${arity.names}; see \`invocache ${command} --help\``);
  }
  if (n > arity.max) {
    const extra = parsed.positionals[arity.max] ?? "";
    throw new UsageError(
      arity.max === 0
        ? `${command} takes no arguments, got ${JSON.stringify(extra)}; see \`invocache ${command} --help\``
        : `${command}: unexpected argument ${JSON.stringify(extra)} (takes ${arity.names}); see \`invocache ${command} --help\``,
    );
  }
  return parsed;
}

/**
 * `--attempt -1` → `--attempt=-1`: parseArgs takes a value that starts with
 * a dash for an option and reports the option as missing its value, when
 * the user did give one (a negative number) that the option's own check
 * should refuse with a message about the number.
 */
function joinNegativeValues(argv: readonly string[], options: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    if (
      name !== undefined &&
      options[name]?.type === "string" &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

function parseFailure(command: string, error: unknown, known: readonly string[]): string {
  const code = (error as { code?: string }).code;
  const message = (error as Error).message ?? String(error);
  const help = `see \`invocache ${command} --help\``;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const flag = /'(-{1,2}[^'\s]+)'/.exec(message)?.[1] ?? message;
    const name = flag.replace(/^-+/, "").split("=")[0] ?? "";
    const near = closest(name, known);
    return `${command}: unknown option ${flag}${near === undefined ? "" : ` (did you mean --${near}?)`}; ${help}`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    // "Option '--store <value>' argument missing" / "Option '--json' does not take an argument"
    const flag = /'(-{1,2}[\w-]+)/.exec(message)?.[1] ?? "an option";
    return message.includes("does not take")
      ? `${command}: ${flag} takes no value; ${help}`
      : `${command}: ${flag} needs a value; ${help}`;
  }
  return `${command}: ${message.split("\n")[0]}; ${help}`;
}

/**
 * The candidate closest to `word` by edit distance, when it is close enough
 * to be a typo (at most 2 edits, and fewer than half the word).
 *
 * @example
 * closest("lss", ["ls", "show"]) // "ls"
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return bestDistance <= 2 && bestDistance < Math.max(2, word.length / 2) ? best : undefined;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/**
 * A non-negative integer option value, or a usage error naming the option.
 *
 * @example
 * integerOption("attempt", "1") // 1
 * integerOption("attempt", "-1") // throws: --attempt must be an integer >= 0, got "-1"
 * integerOption("port", "99999", 0, 65_535) // throws: --port must be an integer 0–65535, got "99999"
 */
export function integerOption(
  name: string,
  value: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  // Digits only: Number("") is 0 and Number(" 8") is 8, neither a value a person meant.
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `${min}–${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, got ${JSON.stringify(value)}`);
  }
  return n;
}

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/**
 * A byte size option value (`1048576`, `64MiB`, `100MB`, `2G`), or a usage
 * error naming the option.
 *
 * @example
 * sizeOption("max-bytes", "64MiB") // 67108864
 */
export function sizeOption(name: string, value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(value.trim());
  const unit = SIZE_UNITS[m?.[2]?.toLowerCase() ?? "?"];
  const bytes = m === null || unit === undefined ? Number.NaN : Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new UsageError(
      `--${name} must be a size such as 1048576, 64MiB or 1GB, got ${JSON.stringify(value)}`,
    );
  }
  return bytes;
}
