/**
 * Child process of the cross-process stamping test: waits for a common start
 * time (so the workers overlap), then stamps one artifact `count` times, one
 * after the other, each with its own attempt.
 *   node --import tsx stamp-worker.ts <artifact> <worker> <count> <startAtMs>
 */
import { invocationManifest, manifestIdentity } from "../../../src/identity/index.js";
import { stampArtifact } from "../../../src/provenance/index.js";
import { MACHINE, PLAN_REQUEST } from "../fixtures.js";

const [artifact, worker, count, startAt] = process.argv.slice(2);
const n = Number(count);
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
for (let i = 0; i < n; i++) {
  const manifest = invocationManifest(PLAN_REQUEST, {
    ...MACHINE,
    attempt: Number(worker) * n + i,
  });
  await stampArtifact(artifact!, { id: manifestIdentity(manifest), manifest });
}
