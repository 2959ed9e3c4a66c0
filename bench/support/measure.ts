/**
 * Interleaved sampling: each round times every contender once (a batch of
 * calls long enough to read the clock reliably), alternating which goes first,
 * so drift in the machine (other processes, CPU frequency, GC pressure) hits
 * candidate and baseline alike. Warmup rounds let the JIT settle and are
 * dropped; the result is the median per call.
 */

export interface Contender {
  name: string;
  /** One call. May return a promise, which is awaited. */
  run: () => unknown;
}

export interface SampleOptions {
  /** Rounds kept (each gives one sample per contender). */
  rounds: number;
  /** Rounds run first and dropped. */
  warmup: number;
  /** Minimum duration of one sample; calls are batched up to it. */
  minSampleMs: number;
}

export interface Samples {
  name: string;
  /** Median time per call, in nanoseconds. */
  medianNs: number;
  /** Interquartile range over the median: 0.05 means samples mostly within ±2.5 %. */
  spread: number;
  /** Calls per sample. */
  batch: number;
}

/** Keeps results alive so no call can be optimised away. */
let sink: unknown;

async function timeBatch(c: Contender, batch: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) {
    const r = c.run();
    sink = r instanceof Promise ? await r : r;
  }
  return Number(process.hrtime.bigint() - start);
}

/** How many calls make one sample last at least `minNs`. */
async function calibrate(c: Contender, minNs: number): Promise<number> {
  let batch = 1;
  for (;;) {
    const ns = await timeBatch(c, batch);
    if (ns >= minNs) return batch;
    batch = Math.max(batch * 2, Math.ceil((batch * minNs * 1.2) / Math.max(ns, 1)));
  }
}

function quantile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Sample every contender in interleaved rounds; results in the order given. */
export async function sampleInterleaved(
  contenders: readonly Contender[],
  opts: SampleOptions,
): Promise<Samples[]> {
  const minNs = opts.minSampleMs * 1e6;
  const batches: number[] = [];
  // Twice: the first pass runs cold code (and so settles on too few calls).
  for (const c of contenders) await calibrate(c, minNs);
  for (const c of contenders) batches.push(await calibrate(c, minNs));
  const perCall: number[][] = contenders.map(() => []);
  for (let round = 0; round < opts.warmup + opts.rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const ns = (await timeBatch(contenders[i]!, batches[i]!)) / batches[i]!;
      if (round >= opts.warmup) perCall[i]!.push(ns);
    }
  }
  void sink;
  return contenders.map((c, i) => {
    const sorted = [...perCall[i]!].sort((a, b) => a - b);
    const medianNs = quantile(sorted, 0.5);
    return {
      name: c.name,
      medianNs,
      spread: (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / medianNs,
      batch: batches[i]!,
    };
  });
}
