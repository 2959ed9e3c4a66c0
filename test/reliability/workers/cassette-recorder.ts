/**
 * Records into a big cassette through a recorder, one call after another,
 * until killed. Prints "ok <i>" once call i has resolved, i.e. once its
 * recording is on disk (`write: "eager"`, the default).
 *
 *   node --import tsx cassette-recorder.ts <path> <first index> <filler entries> [append]
 *
 * With `append`, the store is opened for recording (recordingCassetteStore):
 * each recording is appended to the file instead of rewriting it.
 *
 * The filler (16 KiB values) makes every rewrite of the file take a while,
 * so a SIGKILL often lands in the middle of one.
 */
import { cassetteStore } from "../../../src/cassette/index.js";
import { recordingCassetteStore } from "../../../src/cassette/internal.js";
import { createRecorder } from "../../../src/index.js";

const [path, firstText, fillerText, how] = process.argv.slice(2) as [
  string,
  string,
  string,
  string?,
];
const open = how === "append" ? recordingCassetteStore : cassetteStore;
const store = open(path, { parseCache: false, lockStaleMs: 2_000 });
const filler = "0123456789abcdef".repeat(1024);
await Promise.all(
  Array.from({ length: Number(fillerText) }, (_, i) => store.set(`filler:${i}`, { i, filler })),
);
const recorder = createRecorder({
  store,
  mode: "auto",
  leaseMs: 2_000,
  identity: { homeDir: "/home/u", tmpDirs: ["/tmp"] },
});
process.stdout.write("ready\n");
for (let i = Number(firstText); ; i++) {
  await recorder.call({ role: "writer", model: "m", prompt: `step ${i}` }, async () => ({
    step: i,
    text: `answer ${i}`,
  }));
  process.stdout.write(`ok ${i}\n`);
}
