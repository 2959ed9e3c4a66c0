/**
 * Output of a command that prints as it reads (`ls`, `prune` on a large
 * store): text is gathered into chunks of about 64 KiB, each written at once,
 * and the command waits for stdout to drain before the next one, so memory
 * holds one chunk, not the whole output.
 */
import type { Io } from "./io.js";

const CHUNK_CHARS = 64 * 1024;

/**
 * @example
 * const out = new OutputBuffer(io);
 * await out.write("a line\n");
 * await out.end();
 */
export class OutputBuffer {
  readonly #io: Io;
  #pending: string[] = [];
  #chars = 0;

  constructor(io: Io) {
    this.#io = io;
  }

  /** Add `text`; resolves at once unless a full chunk had to be written and drained. */
  async write(text: string): Promise<void> {
    this.#pending.push(text);
    this.#chars += text.length;
    if (this.#chars >= CHUNK_CHARS) await this.#flush();
  }

  /** Write what is left. */
  async end(): Promise<void> {
    await this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const text = this.#pending.join("");
    this.#pending = [];
    this.#chars = 0;
    this.#io.out(text);
    await this.#io.drained?.();
  }
}
