/**
 * The agent loop's identity per turn by how its body was parsed (not a bench
 * row): the agent-loop bench's identity row parses every turn's body with
 * `JSON.parse` (new, unfrozen objects: the conversation is written and
 * hashed in full on every turn); `createFetch` parses through its body
 * reuse (adapters/body-reuse.ts), which hands the earlier messages out as
 * the same frozen objects, so the identity continues from the kept segment
 * (identity/conversation-chains.ts). Both beside stringify + SHA-256 of the
 * turn's body, each loop fresh, turn by turn in alternating order, CPU time:
 *   node --import tsx bench/support/agent-loop-identity-parse.ts [turns] [rounds]
 */
import { createHash } from "node:crypto";
import { BodyChains } from "../../src/adapters/body-reuse.js";
import { describeHttpCall, VOLATILE_BODY_FIELDS } from "../../src/adapters/http-identity.js";
import { clearNormalizationReuse, invocationIdentity } from "../../src/identity/index.js";
import { invocationCall } from "../../src/invocation/index.js";
import { assistant, BASE_URL, MACHINE, MODEL, SYSTEM, user } from "./agent-loop-workload.js";

const turns = Number(process.argv[2] ?? 40);
const rounds = Number(process.argv[3] ?? 7);
const url = new URL(`${BASE_URL}/chat/completions`);
const volatile = new Set(VOLATILE_BODY_FIELDS);

const bodies = Array.from({ length: turns }, (_, i) => {
  const t = i + 1;
  const messages: { role: string; content: string }[] = [{ role: "system", content: SYSTEM }];
  for (let k = 1; k <= t; k++) {
    messages.push({ role: "user", content: user(k) });
    if (k < t) messages.push({ role: "assistant", content: assistant(k) });
  }
  // A new string per round below (sliced), as from the wire.
  return JSON.stringify({ model: MODEL, messages, temperature: 0 });
});

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const sides = ["json-parse", "body-reuse", "stringify+sha256"] as const;
const us: Record<(typeof sides)[number], number[]> = {
  "json-parse": [],
  "body-reuse": [],
  "stringify+sha256": [],
};
let sink = "";
for (let round = 0; round < rounds + 2; round++) {
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const side of order) {
    clearNormalizationReuse();
    const chains = new BodyChains();
    let total = 0;
    for (let t = 0; t < turns; t++) {
      const text = ` ${bodies[t]!}`.slice(1);
      const parsed = (side === "body-reuse" ? chains.parse(text) : JSON.parse(text)) as Record<
        string,
        never
      >;
      const [req, opts] = invocationCall(describeHttpCall(url, parsed, volatile, undefined));
      const c0 = cpuUs();
      sink =
        side === "stringify+sha256"
          ? createHash("sha256").update(JSON.stringify(parsed), "utf8").digest("hex")
          : invocationIdentity(req, { ...MACHINE, attempt: opts.attempt });
      total += cpuUs() - c0;
    }
    if (round >= 2) us[side].push(total);
  }
}
if (sink.length !== 64) throw new Error("no digest");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const base = median(us["stringify+sha256"]);
console.log(
  `${turns} turns, ${rounds} rounds, CPU µs per loop (median): ${sides
    .map((s) => `${s} ${median(us[s]).toFixed(0)} (${(median(us[s]) / base).toFixed(2)}×)`)
    .join(", ")}`,
);
