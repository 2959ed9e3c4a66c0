/**
 * The channel a live stream's reader reads from: a single-consumer async
 * queue the recording loop (stream-tee.ts) pushes each upstream event into,
 * never waiting for the reader. A reader that stops is said to the tee
 * (`onStop`), which closes the upstream.
 */

/**
 * A single-consumer async queue: the producer never waits for the reader.
 * When the reader stops (`return()`, also while a `next()` is pending),
 * `onStop` runs and later items are dropped.
 */
export class Channel<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #read = 0;
  #done = false;
  #stopped = false;
  #error: { error: unknown } | undefined;
  #wake: (() => void) | undefined;
  readonly #onStop: () => void;

  constructor(onStop: () => void) {
    this.#onStop = onStop;
  }

  push(item: T): void {
    if (this.#stopped) return;
    this.#items.push(item);
    this.#notify();
  }
  end(): void {
    this.#done = true;
    this.#notify();
  }
  fail(error: unknown): void {
    this.#error = { error };
    this.#done = true;
    this.#notify();
  }
  #notify(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#items.length = 0;
    this.#read = 0;
    if (!this.#done) this.#onStop();
    this.#notify();
  }

  async #next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.#stopped) return { done: true, value: undefined };
      if (this.#read < this.#items.length) {
        const item = this.#items[this.#read] as T;
        this.#items[this.#read++] = undefined as T; // let consumed events be collected
        if (this.#read > 1024 && this.#read * 2 > this.#items.length) {
          this.#items.splice(0, this.#read);
          this.#read = 0;
        }
        return { done: false, value: item };
      }
      if (this.#done) {
        if (this.#error !== undefined) throw this.#error.error;
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.#next(),
      return: async () => {
        this.#stop();
        return { done: true, value: undefined };
      },
      throw: async (error: unknown) => {
        this.#stop();
        throw error;
      },
    };
  }
}
