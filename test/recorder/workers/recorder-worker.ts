/**
 * One process of the cross-process single-flight test. Calls every identity
 * in `ids` (shuffled, 8 at a time) through a recorder on the shared store; the
 * upstream is a loopback HTTP server that counts calls. Prints a JSON summary.
 */
import { createRecorder } from "../../../src/index.js";

const [storeUrl, upstreamUrl, idList, seedText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];
const ids = idList.split(",");
let seed = Number(seedText);
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
for (let i = ids.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [ids[i], ids[j]] = [ids[j]!, ids[i]!];
}

const recorder = createRecorder({
  store: storeUrl,
  mode: "auto",
  leaseMs: 5_000,
  identity: { homeDir: "/home/u", tmpDirs: ["/tmp"] },
});
const answers: Record<string, string> = {};
const warnings: string[] = [];
recorder.on("warning", (w) =>
  warnings.push(`${w.message}: ${String((w.error as Error | undefined)?.message)}`),
);
let next = 0;
async function lane() {
  while (next < ids.length) {
    const name = ids[next++]!;
    const out = await recorder.call(
      { role: "worker", model: "m", prompt: `task ${name}` },
      async () => {
        const res = await fetch(`${upstreamUrl}/${name}`, { method: "POST" });
        return (await res.json()) as { answer: string };
      },
    );
    answers[name] = out.answer;
  }
}
await Promise.all(Array.from({ length: 8 }, lane));
await recorder.close();
process.stdout.write(JSON.stringify({ answers, stats: recorder.stats, warnings }));
