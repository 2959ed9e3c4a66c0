/**
 * Before the demo's runs: the namespace is cleared (so run 1 records even
 * when an earlier demo filled the store), the output folder made, the
 * demo's signing key read or generated once, and the artifacts of an
 * earlier demo removed (so every stamp checked is this demo's).
 */
import { access, rm } from "node:fs/promises";
import { join } from "node:path";
import { makeDirectory } from "../../files/index.js";
import {
  readSigningKey,
  readTrustedKey,
  type SigningKey,
  type TrustedKey,
  writeKeyPair,
} from "../../provenance/index.js";
import type { Store } from "../../store/index.js";
import { CliError } from "../errors.js";
import { ALL_ARTIFACTS } from "./pipeline.js";

/** The demo's signing key and where it is kept. */
export interface DemoKey {
  key: SigningKey;
  trusted: TrustedKey;
  privateKeyPath: string;
  publicKeyPath: string;
  /** Made by this demo (else by an earlier one). */
  generated: boolean;
}

/** What the demo starts from. */
export interface DemoSetup {
  /** Keys of the namespace deleted first (from an earlier demo). */
  cleared: number;
  demoKey: DemoKey;
}

/**
 * Clear the namespace, make the output folder, get the key, remove old artifacts.
 *
 * @example
 * const { cleared, demoKey } = await prepareDemo(store, "demo", ".invocache/demo");
 */
export async function prepareDemo(
  store: Store,
  namespace: string,
  outDir: string,
): Promise<DemoSetup> {
  const cleared = await clearNamespace(store, namespace);
  await makeDirectory(outDir).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(
      "ERR_OUT_DIR",
      `--out: cannot make the folder ${outDir} (${error.code ?? error.message}); choose a writable folder`,
      { cause: error },
    );
  });
  const demoKey = await demoSigningKey(outDir);
  for (const name of ALL_ARTIFACTS) {
    await rm(join(outDir, name), { force: true });
    await rm(join(outDir, `${name}.intoto.jsonl`), { force: true });
  }
  return { cleared, demoKey };
}

/**
 * The demo's signing key, in `<out>/keys`: generated on the first demo and
 * reused afterwards (keys are never overwritten), so the keyid stays the same
 * from one demo to the next. It signs demo artifacts only.
 */
async function demoSigningKey(outDir: string): Promise<DemoKey> {
  const dir = join(outDir, "keys");
  const privateKeyPath = join(dir, "demo-signing.key.pem");
  const publicKeyPath = join(dir, "demo-signing.pub.pem");
  const exists = await access(privateKeyPath).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await makeDirectory(dir);
    await writeKeyPair(privateKeyPath, publicKeyPath);
  }
  return {
    key: await readSigningKey(privateKeyPath),
    trusted: await readTrustedKey(publicKeyPath),
    privateKeyPath,
    publicKeyPath,
    generated: !exists,
  };
}

/** Delete every key of a namespace (entries, run records, leases); resolves to how many. */
async function clearNamespace(store: Store, namespace: string): Promise<number> {
  const keys: string[] = [];
  for await (const [key] of store.list(`${namespace}:`)) keys.push(key);
  for (const key of keys) await store.delete(key);
  return keys.length;
}
