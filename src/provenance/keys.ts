/**
 * Signing keys for stamps: Ed25519 (the default) or ECDSA P-256, as PEM.
 *
 * A key's `keyid` is the lowercase hex sha256 of its public key in SPKI DER
 * form (RFC 5280 §4.1.2.7 SubjectPublicKeyInfo), the bytes
 * `openssl pkey -pubin -outform DER` prints. It is derived, never chosen, so
 * a verifier computes it from the public key it trusts (docs/provenance.md).
 * DSSE calls the keyid an unauthenticated hint that "MUST NOT be used for
 * security decisions": verification always checks the signature against the
 * trusted key itself, and uses the keyid only to name keys in reports.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { open, readFile, unlink } from "node:fs/promises";
import { StampError } from "../errors.js";

/** The signature algorithms a stamp can be signed with. */
export type SigningAlgorithm = "ed25519" | "ecdsa-p256";

/** A private key ready to sign stamps (from {@link signingKey} or {@link readSigningKey}). */
export interface SigningKey {
  readonly algorithm: SigningAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** sha256 hex of the public key's SPKI DER. */
  readonly keyid: string;
}

/** A public key whose signatures a verifier accepts (from {@link trustedKey} or {@link readTrustedKey}). */
export interface TrustedKey {
  readonly algorithm: SigningAlgorithm;
  readonly publicKey: KeyObject;
  /** sha256 hex of the public key's SPKI DER. */
  readonly keyid: string;
}

/**
 * The keyid of a public key: sha256 hex of its SPKI DER encoding.
 *
 * @example
 * keyIdOf(createPublicKey(pem)) // "5b0c…" (64 hex), the same as
 * // openssl pkey -pubin -in key.pub.pem -outform DER | sha256sum
 */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("hex");
}

function algorithmOf(key: KeyObject, what: string): SigningAlgorithm {
  if (key.asymmetricKeyType === "ed25519") return "ed25519";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") {
    return "ecdsa-p256";
  }
  const kind =
    key.asymmetricKeyType === "ec"
      ? `an EC key on curve ${key.asymmetricKeyDetails?.namedCurve}`
      : `a ${key.asymmetricKeyType ?? key.type} key`;
  throw new StampError(
    "ERR_STAMP_KEY",
    `${what} is ${kind}; stamps are signed with Ed25519 or ECDSA P-256. Make a key with \`invocache keygen\`.`,
  );
}

type KeyInput = KeyObject | string | Buffer;

function isKeyObject(v: unknown): v is KeyObject {
  return typeof v === "object" && v !== null && "asymmetricKeyType" in v && "export" in v;
}

/**
 * A signing key from a PEM private key (text or bytes) or a private `KeyObject`.
 *
 * @throws StampError `ERR_STAMP_KEY` when it is not a private Ed25519 / P-256 key.
 * @example
 * const key = signingKey(await readFile("keys/invocache-signing.key.pem", "utf8"));
 * await stampArtifact("out/plan.md", { id, manifest, key });
 */
export function signingKey(input: KeyInput, what = "the signing key"): SigningKey {
  let privateKey: KeyObject;
  if (isKeyObject(input)) {
    if (input.type !== "private") {
      throw new StampError(
        "ERR_STAMP_KEY",
        `${what} is a ${input.type} key; signing needs the private key (the .key.pem file of \`invocache keygen\`).`,
      );
    }
    privateKey = input;
  } else if (typeof input === "string" || Buffer.isBuffer(input)) {
    if (/-----BEGIN PUBLIC KEY-----/.test(input.toString())) {
      throw new StampError(
        "ERR_STAMP_KEY",
        `${what} is a public key; signing needs the private key (the .key.pem file of \`invocache keygen\`, not the .pub.pem).`,
      );
    }
    try {
      privateKey = createPrivateKey({ key: input, format: "pem" });
    } catch (error) {
      throw new StampError(
        "ERR_STAMP_KEY",
        `${what} is not a PEM private key (${(error as Error).message}). Make one with \`invocache keygen\`.`,
        { cause: error },
      );
    }
  } else {
    throw new TypeError(
      `${what} must be a PEM string, a Buffer or a KeyObject, got ${typeof input}`,
    );
  }
  const algorithm = algorithmOf(privateKey, what);
  const publicKey = createPublicKey(privateKey);
  return { algorithm, privateKey, publicKey, keyid: keyIdOf(publicKey) };
}

/**
 * A trusted key from a PEM public key (text or bytes) or a `KeyObject`. A
 * private key is accepted too (its public half is used).
 *
 * @throws StampError `ERR_STAMP_KEY` when it is not an Ed25519 / P-256 key.
 * @example
 * const trust = [trustedKey(await readFile("keys/invocache-signing.pub.pem", "utf8"))];
 * await verifyStamp("out/plan.md", { trust });
 */
export function trustedKey(input: KeyInput, what = "the trusted key"): TrustedKey {
  let publicKey: KeyObject;
  if (isKeyObject(input)) {
    publicKey = input.type === "private" ? createPublicKey(input) : input;
  } else if (typeof input === "string" || Buffer.isBuffer(input)) {
    try {
      publicKey = createPublicKey({ key: input, format: "pem" });
    } catch (error) {
      throw new StampError(
        "ERR_STAMP_KEY",
        `${what} is not a PEM public key (${(error as Error).message}). Pass the .pub.pem file of \`invocache keygen\`.`,
        { cause: error },
      );
    }
  } else {
    throw new TypeError(
      `${what} must be a PEM string, a Buffer or a KeyObject, got ${typeof input}`,
    );
  }
  if (publicKey.type !== "public") {
    throw new StampError("ERR_STAMP_KEY", `${what} is a ${publicKey.type} key, not a public key`);
  }
  return { algorithm: algorithmOf(publicKey, what), publicKey, keyid: keyIdOf(publicKey) };
}

async function readKeyFile(path: string, what: string): Promise<string> {
  if (typeof path !== "string" || path === "") {
    throw new TypeError(`${what} path must be a non-empty file path`);
  }
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new StampError(
      "ERR_STAMP_KEY",
      `cannot read ${what} ${path}: ${(error as Error).message}. Make a key pair with \`invocache keygen\`.`,
      { cause: error, path },
    );
  }
}

/**
 * Read a PEM private key file as a signing key.
 *
 * @example
 * const key = await readSigningKey(".invocache/keys/invocache-signing.key.pem");
 */
export async function readSigningKey(path: string): Promise<SigningKey> {
  return signingKey(await readKeyFile(path, "signing key"), `signing key ${path}`);
}

/**
 * Read a PEM public key file as a trusted key.
 *
 * @example
 * const trust = await readTrustedKey(".invocache/keys/invocache-signing.pub.pem");
 */
export async function readTrustedKey(path: string): Promise<TrustedKey> {
  return trustedKey(await readKeyFile(path, "trusted key"), `trusted key ${path}`);
}

/** What {@link writeKeyPair} wrote. */
export interface KeyPairFiles {
  privateKeyPath: string;
  publicKeyPath: string;
  keyid: string;
  algorithm: SigningAlgorithm;
}

/**
 * Generate a key pair and write it as PEM: the private key (PKCS #8) to
 * `privateKeyPath` with mode 0600, the public key (SPKI) to `publicKeyPath`.
 * Never overwrites: if either file exists, nothing is written.
 *
 * @throws StampError `ERR_STAMP_KEY` when a file exists; `ERR_STAMP_IO` when writing fails.
 * @example
 * const { keyid } = await writeKeyPair("keys/ci.key.pem", "keys/ci.pub.pem");
 */
export async function writeKeyPair(
  privateKeyPath: string,
  publicKeyPath: string,
  algorithm: SigningAlgorithm = "ed25519",
): Promise<KeyPairFiles> {
  for (const [p, name] of [
    [privateKeyPath, "privateKeyPath"],
    [publicKeyPath, "publicKeyPath"],
  ] as const) {
    if (typeof p !== "string" || p === "")
      throw new TypeError(`${name} must be a non-empty file path`);
  }
  if (algorithm !== "ed25519" && algorithm !== "ecdsa-p256") {
    throw new TypeError(
      `algorithm must be "ed25519" or "ecdsa-p256", got ${JSON.stringify(algorithm)}`,
    );
  }
  const pair =
    algorithm === "ed25519"
      ? generateKeyPairSync("ed25519")
      : generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const privatePem = pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const publicPem = pair.publicKey.export({ type: "spki", format: "pem" }) as string;
  // Exclusive creates ("wx"): an existing key is never replaced, and a
  // symlink planted at the path is not followed. The private key is created
  // 0600 from the start, so it is never readable by others, even briefly.
  await createExclusive(privateKeyPath, privatePem, 0o600);
  try {
    await createExclusive(publicKeyPath, publicPem, 0o644);
  } catch (error) {
    await unlink(privateKeyPath).catch(() => undefined);
    throw error;
  }
  return { privateKeyPath, publicKeyPath, keyid: keyIdOf(pair.publicKey), algorithm };
}

async function createExclusive(path: string, text: string, mode: number): Promise<void> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, "wx", mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new StampError(
        "ERR_STAMP_KEY",
        `${path} exists; a key is never overwritten. Choose another name or folder, or delete it first if you really mean to replace that key.`,
        { cause: error, path },
      );
    }
    throw new StampError(
      "ERR_STAMP_IO",
      `cannot create ${path}: ${(error as Error).message}. Check that its folder exists and is writable.`,
      { cause: error, path },
    );
  }
  try {
    await fh.chmod(mode); // the umask may have taken bits off the public key's mode
    await fh.writeFile(text, "utf8");
    await fh.sync();
  } finally {
    await fh.close();
  }
}
