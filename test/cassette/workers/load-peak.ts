/**
 * Loads one cassette in a fresh process and prints its memory: the RSS just
 * before the load (modules imported) and the process's peak RSS after it,
 * as one JSON line. Used by test/cassette/memory.test.ts.
 *
 * argv: cassette path, a key it holds.
 */
import { cassetteStore } from "../../../src/cassette/index.js";

const [path, key] = process.argv.slice(2) as [string, string];
const before = process.memoryUsage().rss;
const store = cassetteStore(path, { parseCache: false });
const value = await store.get(key);
await store.discard();
const peak = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ found: value !== undefined, before, peak })}\n`);
