/**
 * One child process of the agent-loop bench's memory row
 * (agent-loop.bench.ts, part `rss`): runs a loop of `turns` turns, each
 * turn's body built by JSON.stringify and parsed again (new strings, as from
 * the wire), and per turn either its identity (`identity`, the reuse cache at
 * `maxBytes`) or stringify + SHA-256 of the body (`baseline`: everything the
 * identity child does except the identity). Both first compute one identity
 * of a rule-dense message and forget what it kept, so that the code and the
 * tables the rules build on first use are in both peaks: the difference is
 * what the loop's identities hold and allocate. Prints one JSON line: peak RSS
 * and what the reuse cache held at the end. Apart from the bench's own
 * process so that each side's peak is its own.
 *
 * node --import tsx bench/support/agent-loop-rss.ts identity|baseline TURNS MAX_BYTES
 */
import { createHash } from "node:crypto";
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
if (mode !== "identity" && mode !== "baseline") throw new Error("mode: identity or baseline");
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
    sink += createHash("sha256").update(JSON.stringify(parsed), "utf8").digest("hex").length;
  }
  messages.push({ role: "assistant", content: `Answer ${t}: ${buildPrompt(2048, 5000 + t)}` });
}
if (sink !== 64 * turns) throw new Error("no digest");
const reuse = normalizationReuseStats();
process.stdout.write(
  `${JSON.stringify({
    peakRssKiB: process.resourceUsage().maxRSS,
    reuseBytes: reuse.bytes,
    reuseEntries: reuse.entries,
    reuseMisses: reuse.misses,
  })}\n`,
);
