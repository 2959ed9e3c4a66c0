/**
 * One timer for every read in flight on a store. All reads of a store have
 * the same timeout, so their deadlines come in the order they started: a
 * list in start order and one timer armed for the oldest deadline are
 * enough. A timer per read (`setTimeout` and `clearTimeout` on every hit:
 * a timer-list insert and removal each time) was a measurable part of a
 * replayed call; here a read only links and unlinks a node.
 *
 * The timer stays armed when the list empties, unreferenced so that it
 * never keeps a process alive that has nothing left to do; it is referenced
 * again whenever a read is in flight, so a read on a frozen store still
 * fails when its timeout has passed, whatever else the process is doing.
 * A read that settles in time only unlinks; the timer rearms itself (for the
 * oldest read still pending) when it fires, at most once per timeout.
 */

/** A read in flight: linked in start order. */
export class PendingRead {
  /** `performance.now()` at which the read has timed out. */
  deadline = 0;
  prev: PendingRead | undefined;
  next: PendingRead | undefined;
  /** Still linked (neither settled nor expired). */
  linked = false;

  constructor(
    readonly key: string,
    readonly reject: (reason: unknown) => void,
  ) {}
}

export class ReadDeadlines {
  readonly #timeoutMs: number;
  /** The error a read that timed out is rejected with. */
  readonly #expired: (key: string) => unknown;
  #head: PendingRead | undefined;
  #tail: PendingRead | undefined;
  #timer: NodeJS.Timeout | undefined;
  #referenced = false;
  /** Waiting for the list to empty (close). */
  #idle: (() => void)[] = [];

  constructor(timeoutMs: number, expired: (key: string) => unknown) {
    this.#timeoutMs = timeoutMs;
    this.#expired = expired;
  }

  /** True while some read is in flight. */
  get busy(): boolean {
    return this.#head !== undefined;
  }

  /** Start the clock of `read`: it is rejected with the timeout error unless `finish`ed in time. */
  start(read: PendingRead): void {
    read.deadline = performance.now() + this.#timeoutMs;
    read.linked = true;
    read.prev = this.#tail;
    if (this.#tail === undefined) this.#head = read;
    else this.#tail.next = read;
    this.#tail = read;
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#fire(), this.#timeoutMs);
      this.#referenced = true;
    } else if (!this.#referenced) {
      this.#timer.ref();
      this.#referenced = true;
    }
  }

  /** The read settled: false when it had already timed out (its answer is too late). */
  finish(read: PendingRead): boolean {
    if (!read.linked) return false;
    this.#unlink(read);
    if (this.#head === undefined) this.#quiet();
    return true;
  }

  /** Resolves once no read is in flight. */
  settled(): Promise<void> {
    if (this.#head === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #unlink(read: PendingRead): void {
    read.linked = false;
    if (read.prev === undefined) this.#head = read.next;
    else read.prev.next = read.next;
    if (read.next === undefined) this.#tail = read.prev;
    else read.next.prev = read.prev;
    read.prev = read.next = undefined;
  }

  /** Nothing in flight: let the process exit, and wake whoever waits for that. */
  #quiet(): void {
    if (this.#referenced) {
      this.#timer?.unref();
      this.#referenced = false;
    }
    if (this.#idle.length > 0) {
      const waiting = this.#idle;
      this.#idle = [];
      for (const resolve of waiting) resolve();
    }
  }

  #fire(): void {
    this.#timer = undefined;
    this.#referenced = false;
    const now = performance.now();
    // Timers run on the event loop's cached clock and may fire a little
    // before `deadline` by this one: such a read waits for the next round.
    while (this.#head !== undefined && this.#head.deadline <= now) {
      const read = this.#head;
      this.#unlink(read);
      read.reject(this.#expired(read.key));
    }
    const head = this.#head;
    if (head === undefined) {
      this.#quiet();
      return;
    }
    this.#timer = setTimeout(() => this.#fire(), Math.max(1, Math.ceil(head.deadline - now)));
    this.#referenced = true;
  }
}
