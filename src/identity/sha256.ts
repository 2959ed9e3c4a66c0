/**
 * SHA-256, synchronous. `node:crypto` where the runtime has it (it uses the
 * CPU's SHA instructions: ~15x faster than pure JS here), `@noble/hashes` as
 * the fallback for runtimes without it (browsers, some edge runtimes). Found
 * through `process.getBuiltinModule` so this module loads anywhere. The
 * fallback is imported (top-level await) only where it is used: on Node its
 * four modules would be a few ms of every cold start for nothing.
 */
type NodeCrypto = typeof import("node:crypto");
type Noble = {
  sha256: typeof import("@noble/hashes/sha2.js").sha256;
  bytesToHex: typeof import("@noble/hashes/utils.js").bytesToHex;
  utf8ToBytes: typeof import("@noble/hashes/utils.js").utf8ToBytes;
};

/** The pure-JS implementation, imported on first use where node:crypto exists. */
let noble: Noble | undefined;
async function loadNoble(): Promise<Noble> {
  const [{ sha256 }, { bytesToHex, utf8ToBytes }] = await Promise.all([
    import("@noble/hashes/sha2.js"),
    import("@noble/hashes/utils.js"),
  ]);
  noble = { sha256, bytesToHex, utf8ToBytes };
  return noble;
}

function loadNodeCrypto(): NodeCrypto | undefined {
  try {
    const p = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    return p?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
  } catch {
    return undefined;
  }
}

const nodeCrypto = loadNodeCrypto();
if (nodeCrypto === undefined) await loadNoble();

/**
 * Load the pure-JS implementation, so that {@link sha256HexNoble} can run
 * where node:crypto exists (tests compare the two). Not needed elsewhere:
 * without node:crypto it is loaded with this module.
 */
export function preloadNobleSha256(): Promise<unknown> {
  return noble === undefined ? loadNoble() : Promise.resolve(noble);
}

function nobleOrThrow(): Noble {
  if (noble === undefined)
    throw new Error("sha256HexNoble: await preloadNobleSha256() first (node:crypto is in use)");
  return noble;
}

/** Which implementation {@link sha256Hex} uses in this runtime. */
export const SHA256_BACKEND: "node:crypto" | "@noble/hashes" =
  nodeCrypto === undefined ? "@noble/hashes" : "node:crypto";

/** SHA-256 of the concatenated parts, lowercase hex, with the pure-JS implementation. */
export function sha256HexNoble(...parts: Uint8Array[]): string {
  const n = nobleOrThrow();
  const h = n.sha256.create();
  for (const p of parts) h.update(p);
  return n.bytesToHex(h.digest());
}

/**
 * SHA-256 of the concatenated parts, lowercase hex.
 *
 * @example
 * sha256Hex(new TextEncoder().encode("abc")) // "ba7816bf…15ad"
 */
export function sha256Hex(...parts: Uint8Array[]): string {
  if (nodeCrypto === undefined) return sha256HexNoble(...parts);
  const h = nodeCrypto.createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
}

/**
 * SHA-256 of a well-formed string's UTF-8, lowercase hex, in one call. On
 * Node ≥ 20.12 that is `crypto.hash`, which makes no Hash object: 2.0 µs
 * against 3.6 µs for createHash + update + digest on a 1.2 KB identity
 * text here (docs/performance.md, "Identity core").
 */
export function sha256HexOfText(text: string): string {
  if (oneShot !== undefined) return oneShot("sha256", text, "hex");
  return createSha256().update(text).hex();
}

/** `crypto.hash`, where this Node has it (added in 20.12 and 21.7). */
const oneShot = (
  nodeCrypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string } | undefined
)?.hash;

/** An incremental SHA-256 (see {@link createSha256}). */
export interface Sha256 {
  /** Add bytes, or a well-formed string as its UTF-8 (check `isWellFormed()` first). */
  update(data: Uint8Array | string): Sha256;
  /** The digest, lowercase hex. */
  hex(): string;
  /**
   * An independent hash in the same state: what was added so far, continued
   * separately (a conversation's prefix hashed once, each turn continued
   * from it: conversation-chains.ts).
   */
  copy(): Sha256;
}

/**
 * An incremental SHA-256 on the same backend as {@link sha256Hex}. Strings go
 * to node:crypto as text, which encodes them natively without a Uint8Array
 * copy; it would turn a lone surrogate into U+FFFD, hence the precondition.
 *
 * @example
 * createSha256().update("ab").update(new Uint8Array([0x63])).hex() // "ba7816bf…15ad"
 */
export function createSha256(): Sha256 {
  return nodeCrypto === undefined
    ? new NobleSha256()
    : new NodeSha256(nodeCrypto.createHash("sha256"));
}

/**
 * {@link createSha256} on the pure-JS implementation (after
 * {@link preloadNobleSha256} where node:crypto exists): tests compare the two.
 */
export function createSha256Noble(): Sha256 {
  return new NobleSha256();
}

// Classes rather than closures: nothing is allocated per call but the object.
class NodeSha256 implements Sha256 {
  constructor(private readonly h: import("node:crypto").Hash) {}
  update(data: Uint8Array | string): Sha256 {
    if (typeof data === "string") this.h.update(data, "utf8");
    else this.h.update(data);
    return this;
  }
  hex(): string {
    return this.h.digest("hex");
  }
  copy(): Sha256 {
    return new NodeSha256(this.h.copy());
  }
}

class NobleSha256 implements Sha256 {
  private readonly n = nobleOrThrow();
  constructor(private readonly h = nobleOrThrow().sha256.create()) {}
  update(data: Uint8Array | string): Sha256 {
    this.h.update(typeof data === "string" ? this.n.utf8ToBytes(data) : data);
    return this;
  }
  hex(): string {
    return this.n.bytesToHex(this.h.digest());
  }
  copy(): Sha256 {
    return new NobleSha256(this.h.clone());
  }
}
