/**
 * The demo's command line: where to record (`--store`), which namespace to
 * clear and record into (`--namespace`), where artifacts, stamps and the
 * demo's key go (`--out`), and `--json`. Each is checked here, so the demo
 * never starts half-way on a bad option.
 */
import { join, relative, resolve } from "node:path";
import { defaultStoreUrl, entryPrefix, parseStoreUrl } from "../../store/index.js";
import { parseCommandArgs } from "../args.js";
import { UsageError } from "../errors.js";
import type { Io } from "../io.js";

const OPTIONS = {
  store: { type: "string" },
  namespace: { type: "string" },
  out: { type: "string" },
} as const;

/** What the demo was asked to do, checked. */
export interface DemoOptions {
  namespace: string;
  /** The store to open: a SQLite path resolved against the working directory. */
  storeUrl: string;
  /** `--store` as given, for the commands the demo suggests afterwards. */
  storeFlag: string | undefined;
  /** Where artifacts, stamps and keys go (absolute). */
  outDir: string;
  /** `outDir` as shown: relative to the working directory. */
  shownOut: string;
  json: boolean;
}

/**
 * Parse and check the demo's arguments.
 *
 * @example
 * demoOptions(["--store", "memory://"], io).namespace // "demo"
 */
export function demoOptions(argv: readonly string[], io: Io): DemoOptions {
  const { values } = parseCommandArgs("demo", argv, OPTIONS, { min: 0, max: 0, names: "" });
  const namespace = values.namespace ?? "demo";
  try {
    entryPrefix(namespace);
  } catch (error) {
    throw new UsageError(`--namespace: ${(error as Error).message}`);
  }
  const url = values.store ?? defaultStoreUrl(io.cwd);
  let storeUrl: string;
  try {
    const location = parseStoreUrl(url, io.cwd);
    storeUrl = location.kind === "sqlite" ? location.url : url;
  } catch (error) {
    throw new UsageError(`--store: ${(error as Error).message}`);
  }
  const outDir = resolve(io.cwd, values.out ?? join(".invocache", "demo"));
  return {
    namespace,
    storeUrl,
    storeFlag: values.store,
    outDir,
    shownOut: relative(io.cwd, outDir) || ".",
    json: values.json === true,
  };
}
