/**
 * A profiling harness for the proxy (not part of `npm run bench:peers`): record
 * N calls through `invocache proxy` into a store, then replay them P times, with
 * the real openai SDK in this process, printing wall and CPU time per phase.
 * Run as `node --import tsx bench/peers/proxy-profile.ts [--store sqlite|cassette]
 * [--calls N] [--passes P] [--concurrency C] [--profile DIR] [--undici]
 * [--driver sqlite3|better-sqlite3] [--streams]`: `--streams` makes every tenth call
 * streamed, as bench:peers does (without it no call streams); `--driver` opens the SQLite store with
 * that binding (better-sqlite3 must resolve, e.g. through NODE_PATH); `--undici`
 * records through undici's global fetch upstream instead of the proxy's
 * node:http one (src/proxy/upstream-fetch.ts), to compare the two; `--concurrency`
 * records with C clients at once (each its own share of the calls; replay stays
 * sequential). With `--profile`, each phase's CPU
 * profile is written to DIR/<phase>.cpuprofile (Chrome's profiler reads them);
 * with `--heap` as well, a sampling heap profile instead (DIR/<phase>.heapprofile:
 * where the bytes that keep the collector busy are allocated).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type OpenAI from "openai";
import { createFetch } from "../../src/adapters/index.js";
import { cassetteStore, createRecorder, openStore, type Store } from "../../src/index.js";
import { createProxy } from "../../src/proxy/index.js";
import { startFakeProvider } from "../../test/fake-provider/index.js";
import { option } from "../support/args.js";
import { type ChatRequest, call, client, request } from "./workload.js";

const kind = option("store", "sqlite");
const calls = Number(option("calls", "300"));
const passes = Number(option("passes", "3"));
const profileDir = option("profile", "");
const concurrency = Number(option("concurrency", "1"));
const undici = process.argv.includes("--undici");
const driver = option("driver", "sqlite3") as "sqlite3" | "better-sqlite3";
const withStreams = process.argv.includes("--streams");
const heap = process.argv.includes("--heap");
const inspector = profileDir === "" ? undefined : new Session();
inspector?.connect();
await inspector?.post(heap ? "HeapProfiler.enable" : "Profiler.enable");

function plain(i: number): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  const { stream: _stream, ...body } = request(i) as ChatRequest & { stream?: boolean };
  return body as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
}

/** Call `i` as bench:peers makes it (every tenth streamed) with --streams, else never streamed. */
async function callOf(openai: OpenAI, i: number): Promise<void> {
  if (withStreams) await call(openai, request(i));
  else await openai.chat.completions.create(plain(i));
}

async function phase(name: string, openai: OpenAI, clients = 1): Promise<void> {
  if (heap)
    await inspector?.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      // Every allocation sampled, not only what is still alive at the end.
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  else await inspector?.post("Profiler.start");
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = c; i < calls; i += clients) await callOf(openai, i);
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (inspector !== undefined) {
    const { profile } = heap
      ? await inspector.post("HeapProfiler.stopSampling")
      : await inspector.post("Profiler.stop");
    writeFileSync(
      join(profileDir, `${name.replace(/[^\w]+/g, "-")}.${heap ? "heapprofile" : "cpuprofile"}`),
      JSON.stringify(profile),
    );
  }
  console.log(
    `${name}: ${((calls / ms) * 1e3).toFixed(0)} calls/s, ${((cpu.user + cpu.system) / calls).toFixed(0)} µs CPU/call`,
  );
}

const dir = mkdtempSync(join(tmpdir(), "invocache-proxy-profile-"));
const provider = await startFakeProvider();
try {
  const store = kind === "sqlite" ? `sqlite://${join(dir, "p.sqlite")}` : join(dir, "p.yaml");
  // A store object when a driver is chosen (the proxy then leaves closing it to us).
  const opened: Store[] = [];
  const storeFor = (): string | Store => {
    if (kind !== "sqlite" || driver === "sqlite3") return store;
    const s = openStore(store, { sqliteDriver: driver });
    opened.push(s);
    return s;
  };
  const opts = { upstreams: { bench: provider.url }, env: {} } as const;
  const rec = await createProxy({
    ...opts,
    store: storeFor(),
    mode: "record",
    ...(undici ? { fetch: (input, init) => globalThis.fetch(input, init) } : {}),
  });
  await phase(
    `record (${kind}, ${concurrency} at once${undici ? ", undici upstream" : ""})`,
    client(`${rec.url}/bench/v1`),
    concurrency,
  );
  await rec.close();
  await phase(
    `direct upstream (${concurrency} at once)`,
    client(`${provider.url}/v1`),
    concurrency,
  );
  const rep = await createProxy({ ...opts, store: storeFor(), mode: "replay" });
  for (let p = 0; p < passes; p++)
    await phase(`replay (${kind}) ${p + 1}`, client(`${rep.url}/bench/v1`));
  await rep.close();
  for (const s of opened.splice(0)) await s.close();
  // In-process createFetch on the same store, for comparison (no hop).
  const recorder = createRecorder({
    store: kind === "sqlite" ? storeFor() : cassetteStore(store),
    mode: "replay",
    env: {},
  });
  const inProcess = client(`${provider.url}/v1`, createFetch({ recorder }));
  for (let p = 0; p < passes; p++)
    await phase(`in-process createFetch (${kind}) ${p + 1}`, inProcess);
  await recorder.close();
  for (const s of opened.splice(0)) await s.close();
} finally {
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
}
