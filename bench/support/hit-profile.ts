/**
 * A steady loop of recorder hits on one store, for `node --cpu-prof` and for
 * counting allocations on the hit path (not a bench row):
 *   node --import tsx --cpu-prof --cpu-prof-dir=prof bench/support/hit-profile.ts [memory|sqlite] [calls]
 * Prints µs per hit, and heap bytes allocated per hit when run with a young
 * generation big enough that no GC runs during the count:
 *   node --import tsx --expose-gc --max-semi-space-size=256 bench/support/hit-profile.ts memory 20000 [otel]
 * (the growth of the young generation over 200 hits, after a full GC).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapSpaceStatistics } from "node:v8";
import { createRecorder } from "../../src/index.js";
import { machine, req, response } from "./hit-request.js";

const kind = process.argv[2] ?? "memory";
const calls = Number(process.argv[3] ?? 20_000);
// "otel": telemetry on with the API's no-op tracer (no SDK registered); default off.
const telemetry = process.argv[4] === "otel";
const dir = mkdtempSync(join(tmpdir(), "invocache-hit-profile-"));
const url = kind === "sqlite" ? `sqlite://${join(dir, "p.sqlite")}` : "memory://";
const recorder = createRecorder({ store: url, mode: "auto", identity: machine, telemetry });
await recorder.call(req, async () => response);
const fn = async () => response;
for (let i = 0; i < 2000; i++) await recorder.call(req, fn);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc !== undefined) {
  // Young-generation bytes in use: nothing is collected between the two reads
  // as long as the hits fit in the (enlarged) semi-space.
  const young = () =>
    getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.space_used_size;
  const n = 200;
  gc();
  const h0 = young();
  for (let i = 0; i < n; i++) await recorder.call(req, fn);
  const grown = young() - h0;
  process.stdout.write(`${kind}: ~${Math.round(grown / n)} heap bytes allocated per hit\n`);
}
const before = process.hrtime.bigint();
for (let i = 0; i < calls; i++) await recorder.call(req, fn);
const us = Number(process.hrtime.bigint() - before) / 1e3 / calls;
process.stdout.write(`${kind}: ${us.toFixed(1)} µs per hit over ${calls} hits\n`);
await recorder.close();
rmSync(dir, { recursive: true, force: true });
