/**
 * A separate process working on a shared store, for the multi-process tests.
 *
 *   node --import tsx store-worker.ts rw    <url> <worker> <count> <workers>
 *   node --import tsx store-worker.ts lease <url> <worker> <rounds>
 *
 * It prints "ready" once the store is open and waits for a line on stdin, so
 * the parent can start every worker at the same moment. Prints
 * one JSON line at the end: what it saw. Never throws: errors are counted.
 */
import { isDeepStrictEqual } from "node:util";
import { openStore } from "../../src/store/open.js";
import type { JsonValue } from "../../src/store/types.js";

const [mode, url, workerArg, countArg, extraArg] = process.argv.slice(2);
if (mode === undefined || url === undefined || workerArg === undefined || countArg === undefined) {
  throw new Error("usage: store-worker.ts rw|lease <url> <worker> <count> [workers]");
}
const worker = Number(workerArg);
const count = Number(countArg);
const store = openStore(url);
const errors: string[] = [];

const expected = (w: number, i: number): JsonValue => ({ w, i, text: `${"x".repeat(200)}${i}` });

async function readWrite(workers: number): Promise<object> {
  let misses = 0;
  let mismatches = 0;
  let foreignHits = 0;
  for (let i = 0; i < count; i++) {
    const key = `mp:w${worker}:${i}`;
    try {
      await store.set(key, expected(worker, i));
      const got = await store.get(key);
      if (got === undefined) misses++;
      else if (!isDeepStrictEqual(got, expected(worker, i))) mismatches++;
      // Read another worker's row: absent is fine (not written yet), wrong is not.
      const other = (worker + 1 + (i % (workers - 1))) % workers;
      const theirs = await store.get(`mp:w${other}:${i}`);
      if (theirs !== undefined) {
        foreignHits++;
        if (!isDeepStrictEqual(theirs, expected(other, i))) mismatches++;
      }
    } catch (error) {
      errors.push(String(error));
    }
  }
  for (let i = 0; i < count; i++) {
    try {
      if (!isDeepStrictEqual(await store.get(`mp:w${worker}:${i}`), expected(worker, i))) misses++;
    } catch (error) {
      errors.push(String(error));
    }
  }
  return { misses, mismatches, foreignHits };
}

async function leases(): Promise<object> {
  const won: number[] = [];
  for (let round = 0; round < count; round++) {
    try {
      if (await store.acquireLease(`race:${round}`, `worker-${worker}`, 60_000)) won.push(round);
    } catch (error) {
      errors.push(String(error));
    }
  }
  return { won };
}

// Open before the start signal, so all workers contend from the same moment.
await store.get("warm-up").catch((error: unknown) => errors.push(String(error)));
process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();

const result = mode === "rw" ? await readWrite(Number(extraArg)) : await leases();
await store.close();
process.stdout.write(`${JSON.stringify({ worker, errors, ...result })}\n`);
