/**
 * Rewrites a big cassette (~4 MB) in a loop until killed, printing "wrote N"
 * after each write. The parent SIGKILLs it at a random moment.
 */
import { cassetteStore } from "../../../src/cassette/index.js";

const [path] = process.argv.slice(2) as [string];
const store = cassetteStore(path, { parseCache: false });
const filler = "0123456789abcdef".repeat(1024); // 16 KiB
await Promise.all(Array.from({ length: 250 }, (_, i) => store.set(`big:${i}`, { i, filler })));
for (let round = 0; ; round++) {
  await store.set("big:round", { round, filler: `${round}:${filler}` });
  process.stdout.write(`wrote ${round}\n`);
}
