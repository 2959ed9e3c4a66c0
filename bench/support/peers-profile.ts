/**
 * The peers workload in one process, for profiling (not a bench row):
 * records `calls` calls of bench/peers/workload.ts against the loopback fake
 * provider with one invocache store, stops the provider, then replays them
 * `rounds` times through the real openai SDK, beside the SDK floor (the same
 * client with a fetch answering constant bytes) measured in the same process:
 *   PEERS_PROFILE=replay.cpuprofile node --import tsx bench/support/peers-profile.ts [cassette|sqlite] [calls] [rounds]
 * (PEERS_PROFILE: a CPU profile of the timed replay only, not of recording and
 * loading; PEERS_PROFILE_FLOOR: the same of the floor).
 * Prints calls/s of each and the ratio, then the time of each request's
 * identity alone (what createFetch computes before it reads the store)
 * beside the floor's time per call; only ratios mean anything on a shared
 * machine.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeHttpCall, VOLATILE_BODY_FIELDS } from "../../src/adapters/http-identity.js";
import { invocationIdentity } from "../../src/identity/index.js";
import { invocationCall } from "../../src/invocation/index.js";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { TOOLS } from "../peers/tools.js";
import { call, client, request } from "../peers/workload.js";

const kind = process.argv[2] === "sqlite" ? "invocache-sqlite" : "invocache-cassette";
const calls = Number(process.argv[3] ?? 300);
const rounds = Number(process.argv[4] ?? 5);
const dir = mkdtempSync(join(tmpdir(), "invocache-peers-profile-"));
const requests = Array.from({ length: calls }, (_, i) => request(i));
const tool = TOOLS[kind];
await tool.preload();

const provider = await startFakeProvider();
const baseUrl = `${provider.url}/v1`;
const recorded: string[] = [];
{
  const session = await tool.open(dir, "record");
  const openai = client(baseUrl, session.fetch);
  for (const body of requests) recorded.push(await call(openai, body));
  await session.close(calls);
}
// The floor's two constant answers, captured from the provider.
const captured: { body: Uint8Array; headers: [string, string][] }[] = [];
for (const streamed of [false, true]) {
  let saved: { body: Uint8Array; headers: [string, string][] } | undefined;
  const capture: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    saved = { body: new Uint8Array(await res.arrayBuffer()), headers: [...res.headers] };
    return new Response(saved.body, { status: res.status, headers: saved.headers });
  };
  await call(client(baseUrl, capture), requests.find((r) => (r.stream === true) === streamed)!);
  captured.push(saved!);
}
await provider.close();

const [json, sse] = captured as [(typeof captured)[0], (typeof captured)[0]];
const constant: typeof fetch = async (_input, init) => {
  const streamed = typeof init?.body === "string" && init.body.includes('"stream":true');
  const c = streamed ? sse : json;
  return new Response(c.body, { status: 200, headers: c.headers });
};

const inspector = new Session();
let connected = false;
async function startProfile(): Promise<void> {
  if (!connected) inspector.connect();
  connected = true;
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.setSamplingInterval", { interval: 100 });
  await inspector.post("Profiler.start");
}
async function stopProfile(path: string): Promise<void> {
  const { profile } = await inspector.post("Profiler.stop");
  writeFileSync(path, JSON.stringify(profile));
}

async function rate(fetchFn: typeof fetch, check: boolean): Promise<number> {
  const openai = client(baseUrl, fetchFn);
  const started = performance.now();
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < calls; i++) {
      const answer = await call(openai, requests[i]!);
      if (check && answer !== recorded[i]) throw new Error(`call ${i}: replayed answer differs`);
    }
  }
  return (rounds * calls) / ((performance.now() - started) / 1e3);
}

/**
 * What createFetch does before the store is asked: parse the SDK's JSON
 * body, describe the call, compute its identity. Beside the floor's time per
 * call: a replay at 0.7x the floor leaves invocache 0.43x the floor's time
 * per call for all of its work, this included.
 */
const chatUrl = new URL(`${baseUrl}/chat/completions`);
const volatile = new Set(VOLATILE_BODY_FIELDS);
const bodies = requests.map((r) => JSON.stringify(r));
function identityRate(): number {
  const started = performance.now();
  for (let r = 0; r < rounds; r++) {
    for (const text of bodies) {
      const [req, opts] = invocationCall(
        describeHttpCall(chatUrl, JSON.parse(text), volatile, undefined),
      );
      invocationIdentity(req, { attempt: opts.attempt });
    }
  }
  return (rounds * calls) / ((performance.now() - started) / 1e3);
}

const session = await tool.open(dir, "replay");
await rate(session.fetch, true); // warm up: loads the recording, JITs both paths
await rate(constant, false);
const profile = process.env.PEERS_PROFILE;
if (profile !== undefined) await startProfile();
const ours = await rate(session.fetch, true);
if (profile !== undefined) await stopProfile(profile);
const floorProfile = process.env.PEERS_PROFILE_FLOOR;
if (floorProfile !== undefined) await startProfile();
const floor = await rate(constant, false);
if (floorProfile !== undefined) await stopProfile(floorProfile);
await session.close(calls);
identityRate(); // warm up
const identities = identityRate();
process.stdout.write(
  `${kind}: ${ours.toFixed(0)} calls/s, floor ${floor.toFixed(0)} calls/s, ${(ours / floor).toFixed(2)}× the floor\n` +
    `identity of each request alone (body parse + invocationIdentity): ${(1e6 / identities).toFixed(0)} µs a call, ` +
    `${(floor / identities).toFixed(2)}× the floor's time per call (a 0.7× replay leaves 0.43× for all of invocache's work)\n`,
);
rmSync(dir, { recursive: true, force: true });
