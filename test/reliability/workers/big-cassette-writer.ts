/**
 * One of several processes recording into one big cassette at once. Waits
 * for "go" on stdin, then writes its entries one after another with
 * `store.set` (eager: each resolves once on disk) and prints "ok <key>" for
 * each acknowledged one, "err <key> <name>: <message>" for each refused one.
 *
 *   node --import tsx big-cassette-writer.ts <path> <worker> <count> <lockStaleMs>
 */
import { cassetteStore } from "../../../src/cassette/index.js";

const [path, worker, countText, staleText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];
const store = cassetteStore(path, { parseCache: false, lockStaleMs: Number(staleText) });
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
for (let i = 0; i < Number(countText); i++) {
  const key = `w${worker}:${i}`;
  try {
    await store.set(key, { worker, i, at: Date.now() });
    process.stdout.write(`ok ${key}\n`);
  } catch (error) {
    const e = error as Error;
    process.stdout.write(`err ${key} ${e.name}: ${e.message.split("\n")[0]}\n`);
  }
}
await store.close();
process.stdout.write("done\n");
