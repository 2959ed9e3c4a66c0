/**
 * hashArtifact: the only file I/O in the identity core. Streams with 1 MiB
 * reads (measured here: about twice as fast as the 64 KiB default of fs
 * streams) into two reused buffers, so memory stays constant on multi-GB
 * files: the next read runs on libuv's thread pool while this thread hashes
 * the previous chunk (double buffering; docs/performance.md has the numbers).
 */
import { open } from "node:fs/promises";
import { sha256Hex } from "./sha256.js";

const CHUNK = 1 << 20;

type NodeCrypto = typeof import("node:crypto");

/**
 * `sha256:<hex>` of a file (by path), a byte array, or an async stream of byte chunks.
 *
 * @example
 * const h = await hashArtifact("dist/app.js"); // "sha256:9f86d08…"
 * invocationIdentity(req, { inputArtifactHashes: [h] });
 */
export async function hashArtifact(
  src: string | Uint8Array | AsyncIterable<Uint8Array>,
): Promise<string> {
  if (src instanceof Uint8Array) return `sha256:${sha256Hex(src)}`;
  const { createHash } = (await import("node:crypto")) as NodeCrypto;
  const h = createHash("sha256");
  if (typeof src === "string") {
    if (src === "") throw new TypeError("hashArtifact: path must be a non-empty string");
    const fh = await open(src, "r");
    let filling = Buffer.allocUnsafe(CHUNK);
    let spare = Buffer.allocUnsafe(CHUNK);
    let pending: Promise<{ bytesRead: number }> | undefined;
    try {
      // Position null reads on from the file offset, so pipes and FIFOs work;
      // reads stay in order because each starts after the previous resolved.
      pending = fh.read(filling, 0, CHUNK, null);
      for (;;) {
        const { bytesRead } = await pending;
        pending = undefined;
        if (bytesRead === 0) break;
        const full = filling;
        filling = spare;
        spare = full;
        pending = fh.read(filling, 0, CHUNK, null);
        h.update(full.subarray(0, bytesRead));
      }
    } finally {
      // Never close the handle under a read still in flight.
      await pending?.catch(() => undefined);
      await fh.close();
    }
  } else if (src !== null && typeof src === "object" && Symbol.asyncIterator in src) {
    for await (const chunk of src) {
      if (!(chunk instanceof Uint8Array)) {
        throw new TypeError(
          "hashArtifact: the stream must yield Uint8Array chunks (open files without an encoding)",
        );
      }
      h.update(chunk);
    }
  } else {
    throw new TypeError(
      "hashArtifact: src must be a file path, a Uint8Array or an AsyncIterable<Uint8Array>",
    );
  }
  return `sha256:${h.digest("hex")}`;
}
