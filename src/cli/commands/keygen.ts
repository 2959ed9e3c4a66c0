/**
 * `invocache keygen`: make a key pair to sign stamps with.
 */

import { join, relative, resolve } from "node:path";
import { makeDirectory } from "../../files/index.js";
import { type SigningAlgorithm, writeKeyPair } from "../../provenance/index.js";
import { shellQuote } from "../../shell/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";

const OPTIONS = {
  out: { type: "string" },
  name: { type: "string" },
  algorithm: { type: "string" },
} as const;

const ALGORITHMS: readonly SigningAlgorithm[] = ["ed25519", "ecdsa-p256"];

/**
 * @example
 * // invocache keygen --out .invocache/keys
 */
export const keygenCommand: Command = {
  name: "keygen",
  help: `Usage: invocache keygen [--out DIR] [--name NAME] [--algorithm ed25519|ecdsa-p256] [--json]

Generate a key pair to sign stamps with (docs/provenance.md, "Keys"):

  DIR/NAME.key.pem   the private key, PKCS #8 PEM, mode 0600: keep it secret
  DIR/NAME.pub.pem   the public key, SPKI PEM: give it to whoever verifies

and print its keyid (sha256 hex of the public key's SPKI DER). Refuses to
overwrite: if either file exists, nothing is written.

Options:
  --out DIR          where to write the pair (default: .invocache/keys; created if missing)
  --name NAME        file name stem (default: invocache-signing)
  --algorithm ALG    ed25519 (default) or ecdsa-p256
  --json             {"privateKey", "publicKey", "keyid", "algorithm"}
  -h, --help         this help

Examples:
  invocache keygen
  invocache stamp out/plan.md --id 3f2a9c0d --key .invocache/keys/invocache-signing.key.pem
  invocache verify out/plan.md --trust .invocache/keys/invocache-signing.pub.pem
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("keygen", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const algorithm = (values.algorithm ?? "ed25519") as SigningAlgorithm;
    if (!ALGORITHMS.includes(algorithm)) {
      throw new UsageError(
        `keygen: --algorithm must be ${ALGORITHMS.join(" or ")}, got ${JSON.stringify(values.algorithm)}`,
      );
    }
    const name = values.name ?? "invocache-signing";
    if (name === "" || /[/\\]/.test(name)) {
      throw new UsageError(
        `keygen: --name must be a file name stem without slashes, got ${JSON.stringify(name)}; choose the folder with --out`,
      );
    }
    if (values.out === "")
      throw new UsageError("keygen: --out must be a folder path, got an empty string");
    const dir = resolve(io.cwd, values.out ?? join(".invocache", "keys"));
    await makeDirectory(dir);
    const files = await writeKeyPair(
      join(dir, `${name}.key.pem`),
      join(dir, `${name}.pub.pem`),
      algorithm,
    );
    const shown = (p: string) => relative(io.cwd, p) || p;
    if (values.json) {
      printJson(io, {
        privateKey: shown(files.privateKeyPath),
        publicKey: shown(files.publicKeyPath),
        keyid: files.keyid,
        algorithm: files.algorithm,
      });
      return EXIT.ok;
    }
    const s = io.style;
    io.out(`${s.bold("Key pair")} (${algorithm}), keyid ${s.cyan(files.keyid)}\n`);
    io.out(
      `  private  ${shown(files.privateKeyPath)}  (mode 0600: keep it secret, never commit it)\n`,
    );
    io.out(`  public   ${shown(files.publicKeyPath)}  (give it to whoever verifies)\n`);
    io.out(
      s.dim(
        `Sign:   invocache stamp <artifact> --id <prefix> --key ${shellQuote(shown(files.privateKeyPath))}\n` +
          `Verify: invocache verify <artifact> --trust ${shellQuote(shown(files.publicKeyPath))}\n`,
      ),
    );
    return EXIT.ok;
  },
};
