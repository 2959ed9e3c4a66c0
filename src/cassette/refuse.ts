/**
 * The cassette's last line of defense against secrets: a value that still
 * holds one when it reaches the writer is refused (`SecretLeakError`, names
 * and paths only, never the value), and nothing of the write reaches the
 * file. Redaction is not done here: it happens once, in the recorder, before
 * anything is written (src/recorder/core.ts, `storable`).
 */
import { SecretLeakError } from "../errors.js";
import { createSecretScanner, type SecretFinding, type SecretOptions } from "../secrets/index.js";
import type { CassetteItem } from "./item.js";

/**
 * Throw when `item` (its key or its value) holds a secret.
 *
 * @throws SecretLeakError naming each secret's variable or shape and path.
 * @example
 * refuseSecrets({ key, value: entry }, { env: process.env }, "cassettes/a.yaml")
 */
export function refuseSecrets(item: CassetteItem, scan: SecretOptions, target: string): void {
  const scanner = createSecretScanner(scan);
  const inKey: SecretFinding[] = [];
  scanner.redactString(item.key, "key", inKey);
  const inValue = scanner.redact(item.value).found;
  const findings = [...inKey, ...inValue];
  if (findings.length === 0) return;
  const list = findings.map((f) => `${f.name} at ${f.path}`).join(", ");
  const fix =
    inKey.length > 0
      ? "A store key cannot be redacted; do not put secrets in keys."
      : "Write through a recorder (it redacts secrets before the write, unless created with secrets: false), " +
        "or remove the secret from the value. A cassette that already holds one is cleaned with `invocache redact` (redactCassette).";
  const n = findings.length;
  throw new SecretLeakError(
    target,
    findings.map(({ name, path }) => ({ name, path })),
    `invocache: refusing to write ${n} secret${n === 1 ? "" : "s"} to ${target}${inKey.length > 0 ? "" : ` (${item.key})`}: ${list}. ${fix}`,
  );
}
