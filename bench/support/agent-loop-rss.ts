/**
 * One child process of the agent-loop bench's memory row
 * (agent-loop.bench.ts, part `rss`): runs a loop of `turns` turns, each
 * turn's body built by JSON.stringify and parsed again (new strings, as from
 * the wire), and per turn either its identity (`identity`, the reuse cache at
 * `maxBytes`) or stringify + SHA-256 of the body (`baseline`: everything the
 * identity child does except the identity), or that and, per new message,
 * the three strings the cache keeps for it (`held`: the message and two
 * escaped copies, about the cache's bytes held by plain arrays: what any
 * data of the cache's size costs this process). All first compute one identity
 * of a rule-dense message and forget what it kept, so that the code and the
 * tables the rules build on first use are in both peaks: the difference is
 * what the loop's identities hold and allocate. Prints one JSON line: peak RSS,
 * what the reuse cache held at the end by its own count, and the live heap
 * (after full collections) before and after emptying it: what it held by
 * the heap's. Apart from the bench's own process so that each side's peak
 * is its own.
 *
 * node --import tsx bench/support/agent-loop-rss.ts identity|baseline|held TURNS MAX_BYTES
 */
import { createHash } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describeHttpCall, VOLATILE_BODY_FIELDS } from "../../src/adapters/http-identity.js";
import {
  clearNormalizationReuse,
  configureNormalizationReuse,
  invocationIdentity,
  normalizationReuseStats,
} from "../../src/identity/index.js";
import { invocationCall } from "../../src/invocation/index.js";
import { buildPrompt } from "./prompt.js";

const [mode, turnsArg, maxBytesArg] = process.argv.slice(2);
if (mode !== "identity" && mode !== "baseline" && mode !== "held")
  throw new Error("mode: identity, baseline or held");
const turns = Number(turnsArg);
configureNormalizationReuse({ maxBytes: Number(maxBytesArg) });

const CHAT_URL = new URL("http://127.0.0.1:9/v1/chat/completions");
const MACHINE = { homeDir: "/home/dev", tmpDirs: ["/tmp"] };
const volatile = new Set(VOLATILE_BODY_FIELDS);
const messages: Array<{ role: string; content: string }> = [
  { role: "system", content: "You are the builder step of a coding agent." },
];
const warm = JSON.parse(
  JSON.stringify({
    model: "gpt-bench",
    messages: [{ role: "user", content: buildPrompt(2048, 1) }],
  }),
) as Record<string, unknown>;
const [warmReq, warmOpts] = invocationCall(
  describeHttpCall(CHAT_URL, warm as never, volatile, undefined),
);
let sink = invocationIdentity(warmReq, { ...MACHINE, attempt: warmOpts.attempt }).length - 64;
clearNormalizationReuse();
/** `held`: the strings the cache would keep, in a plain array. */
const held: string[] = [];
for (let t = 1; t <= turns; t++) {
  messages.push({ role: "user", content: `Turn ${t}: ${buildPrompt(2048, 1000 + t)}` });
  const parsed = JSON.parse(
    JSON.stringify({ model: "gpt-bench", messages, temperature: 0 }),
  ) as Record<string, unknown>;
  if (mode === "identity") {
    const [req, opts] = invocationCall(
      describeHttpCall(CHAT_URL, parsed as never, volatile, undefined),
    );
    sink += invocationIdentity(req, { ...MACHINE, attempt: opts.attempt }).length;
  } else {
    if (mode === "held") {
      // This turn's new messages (the first turn's two, then one user and
      // one assistant message a turn), as the cache keeps each: the string
      // from the body, its canonical JSON, and that escaped again.
      const sent = parsed.messages as Array<{ content: string }>;
      for (let i = t === 1 ? 0 : sent.length - 2; i < sent.length; i++) {
        const c = sent[i]!.content;
        const written = JSON.stringify(c);
        held.push(c, written, JSON.stringify(written).slice(1, -1));
      }
    }
    sink += createHash("sha256").update(JSON.stringify(parsed), "utf8").digest("hex").length;
  }
  messages.push({ role: "assistant", content: `Answer ${t}: ${buildPrompt(2048, 5000 + t)}` });
}
if (sink !== 64 * turns) throw new Error("no digest");
// The peak first: the collections below must not count in it.
const peakRssKiB = process.resourceUsage().maxRSS;
const reuse = normalizationReuseStats();
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const liveHeap = () => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};
const liveWith = liveHeap();
clearNormalizationReuse();
held.length = 0;
const liveWithout = liveHeap();
process.stdout.write(
  `${JSON.stringify({
    peakRssKiB,
    reuseBytes: reuse.bytes,
    reuseEntries: reuse.entries,
    reuseMisses: reuse.misses,
    heldBytes: liveWith - liveWithout,
    liveHeapBytes: liveWith,
  })}\n`,
);
