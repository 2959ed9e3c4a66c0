/**
 * Command-line options of the bench's standalone scripts (bench/peers/proxy-*.ts):
 * `--name value` pairs, read from `process.argv`.
 */

/** The value after `--name`, or `fallback` when the option is absent or has no value. */
export function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
}

/** `--name`'s value as a positive integer (or `fallback`); a script's usage error otherwise. */
export function countOption(name: string, fallback: number): number {
  const raw = option(name, String(fallback));
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`--${name} must be a positive integer, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return n;
}
