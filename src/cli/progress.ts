/**
 * A tiny progress bar on stderr, drawn only on a terminal and only once an
 * operation has lasted long enough to be worth watching (so short runs and
 * pipes never see it). With an unknown total it shows a running count.
 */
import type { Io } from "./io.js";

/** A running progress indicator. */
export interface Progress {
  /** `n` more items done (default 1). */
  tick(n?: number): void;
  /** Erase the bar. Idempotent. */
  done(): void;
}

const NOOP: Progress = { tick() {}, done() {} };
/** Don't draw for operations shorter than this (`INVOCACHE_PROGRESS_DELAY_MS` overrides it). */
const SHOW_AFTER_MS = 250;
const REDRAW_MS = 80;
const BAR_WIDTH = 24;

/**
 * Start a progress indicator for `label` (e.g. "verifying"), of `total`
 * items when known.
 *
 * @example
 * const bar = progress(io, "pruning", keys.length);
 * for (const key of keys) { await store.delete(key); bar.tick(); }
 * bar.done();
 */
export function progress(
  io: Io,
  label: string,
  total?: number,
  now: () => number = () => performance.now(),
): Progress {
  if (!io.stderrTTY) return NOOP;
  const delay = io.env.INVOCACHE_PROGRESS_DELAY_MS
    ? Number(io.env.INVOCACHE_PROGRESS_DELAY_MS)
    : Number.NaN;
  const showAfter = Number.isFinite(delay) && delay >= 0 ? delay : SHOW_AFTER_MS;
  const started = now();
  let count = 0;
  let lastDraw = 0;
  let drawn = false;
  let finished = false;

  const draw = () => {
    const t = now();
    if (t - started < showAfter || t - lastDraw < REDRAW_MS) return;
    lastDraw = t;
    drawn = true;
    let text: string;
    if (total !== undefined && total > 0) {
      const ratio = Math.min(1, count / total);
      const full = Math.round(ratio * BAR_WIDTH);
      text = `${label} [${"█".repeat(full)}${"░".repeat(BAR_WIDTH - full)}] ${count}/${total}`;
    } else {
      text = `${label}… ${count}`;
    }
    io.err(`\r\x1b[K${text.slice(0, Math.max(10, io.columns - 1))}`);
  };

  return {
    tick(n = 1) {
      if (finished) return;
      count += n;
      draw();
    },
    done() {
      if (finished) return;
      finished = true;
      if (drawn) io.err("\r\x1b[K");
    },
  };
}
