/**
 * The agent-loop bench's identity rows by CPU time rather than wall clock,
 * for a busy machine (process.cpuUsage: what this process ran, whatever
 * else runs beside it). Not part of `npm run bench`: run it by hand, base
 * and branch alternated (docs/performance.md, "Tiny identity and the reuse
 * cache's bound").
 *
 * - `tiny`: `invocationIdentity` of the bench's tiny request against
 *   stringify + SHA-256 of its body, in alternated blocks of `CALLS` calls
 *   (default 5,000), median of 22 blocks after 3.
 * - `loop TURNS`: the identity of every turn of a fresh TURNS-turn loop
 *   (bodies parsed anew, reuse cache emptied) against stringify + SHA-256 of
 *   every turn's body, median of 7 loops after 2.
 *
 * node --import tsx bench/support/identity-cpu.ts tiny [CALLS] | loop TURNS
 */
import { createHash } from "node:crypto";
import { describeHttpCall, VOLATILE_BODY_FIELDS } from "../../src/adapters/http-identity.js";
import { clearNormalizationReuse, invocationIdentity } from "../../src/identity/index.js";
import { invocationCall } from "../../src/invocation/index.js";
import { buildPrompt } from "./prompt.js";

const CHAT_URL = new URL("http://127.0.0.1:9/v1/chat/completions");
const MACHINE = { homeDir: "/home/dev", tmpDirs: ["/tmp"] };
const volatile = new Set(VOLATILE_BODY_FIELDS);
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (x: number[]) => x.sort((p, q) => p - q)[x.length >> 1]!;
const sha = (body: unknown) =>
  createHash("sha256").update(JSON.stringify(body), "utf8").digest("hex");
const identity = (body: Record<string, unknown>) => {
  const [req, opts] = invocationCall(
    describeHttpCall(CHAT_URL, body as never, volatile, undefined),
  );
  return invocationIdentity(req, { ...MACHINE, attempt: opts.attempt });
};

const [mode, arg] = process.argv.slice(2);
let sink = 0;
const ours: number[] = [];
const base: number[] = [];
if (mode === "tiny") {
  const calls = Number(arg ?? 5000);
  const parsed = JSON.parse(
    JSON.stringify({
      model: "gpt-bench",
      messages: [{ role: "user", content: "Say hello in three words." }],
      temperature: 0,
    }),
  ) as Record<string, unknown>;
  const [req, opts] = invocationCall(
    describeHttpCall(CHAT_URL, parsed as never, volatile, undefined),
  );
  const idOpts = { ...MACHINE, attempt: opts.attempt };
  for (let r = 0; r < 25; r++) {
    let t0 = cpu();
    for (let i = 0; i < calls; i++) sink += invocationIdentity(req, idOpts).length;
    const a = cpu() - t0;
    t0 = cpu();
    for (let i = 0; i < calls; i++) sink += sha(parsed).length;
    const b = cpu() - t0;
    if (r >= 3) {
      ours.push((a * 1e3) / calls);
      base.push((b * 1e3) / calls);
    }
  }
  const a = median(ours);
  const b = median(base);
  console.log(
    `tiny request, CPU: identity ${(a / 1e3).toFixed(2)} µs vs stringify+sha256 ${(b / 1e3).toFixed(2)} µs: ${(a / b).toFixed(2)}×`,
  );
} else if (mode === "loop") {
  const turns = Number(arg ?? 40);
  const bodies: string[] = [];
  const messages = [{ role: "system", content: "You are the builder step of a coding agent." }];
  for (let t = 1; t <= turns; t++) {
    messages.push({ role: "user", content: `Turn ${t}: ${buildPrompt(2048, 1000 + t)}` });
    bodies.push(JSON.stringify({ model: "gpt-bench", messages, temperature: 0 }));
    messages.push({ role: "assistant", content: `Answer ${t}: ${buildPrompt(2048, 5000 + t)}` });
  }
  for (let r = 0; r < 9; r++) {
    let parsed = bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
    clearNormalizationReuse();
    let t0 = cpu();
    for (const p of parsed) sink += identity(p).length;
    const a = cpu() - t0;
    parsed = bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
    t0 = cpu();
    for (const p of parsed) sink += sha(p).length;
    const b = cpu() - t0;
    if (r >= 2) {
      ours.push(a);
      base.push(b);
    }
  }
  const a = median(ours);
  const b = median(base);
  console.log(
    `${turns}-turn loop, CPU: identity ${(a / 1e3).toFixed(1)} ms vs stringify+sha256 ${(b / 1e3).toFixed(1)} ms per loop: ${(a / b).toFixed(2)}×`,
  );
} else {
  throw new Error("mode: tiny [CALLS] or loop TURNS");
}
if (sink === 0) throw new Error("no digest");
