/**
 * Staleness is the recorder's policy on every store: a recording older than
 * `maxAge` is served with a warning, refused (`StaleEntryError`), or
 * re-recorded, on a real SQLite file and on memory alike. Recordings are
 * made by a recorder and aged by rewriting their `meta.recordedAt` in the store.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createRecorder,
  openStore,
  ReplayMissError,
  StaleEntryError,
  type Store,
} from "../../src/index.js";
import { Emitter } from "../../src/recorder/events.js";
import { resolveKindModes } from "../../src/recorder/kind-modes.js";
import { resolveStaleness, stalenessView } from "../../src/recorder/staleness.js";
import { type Entry, valueDigest } from "../../src/store/index.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("rec-staleness");
let n = 0;
const OLD = "2020-01-01T00:00:00.000Z";
const req = { role: "planner", model: "m", prompt: "plan the release" };

const STORES: Array<[string, () => Store]> = [
  ["SQLite", () => openStore(`sqlite://${join(dir, `cache-${n++}.sqlite`)}`)],
  ["memory", () => openStore("memory://")],
];

/** A store holding one recording of `req` (answer "recorded") dated `at`; its key. */
async function agedRecording(store: Store, at: string): Promise<string> {
  const recorder = createRecorder({ store, mode: "record" });
  await recorder.call(req, async () => ({ text: "recorded" }));
  await recorder.close();
  const [key, entry] = (await all(store))[0]!;
  await store.set(key, { ...entry, meta: { ...entry.meta, recordedAt: at } } as never);
  return key;
}

async function all(store: Store) {
  const rows: Array<[string, unknown]> = [];
  for await (const row of store.list("default:e:")) rows.push(row);
  expect(rows).toHaveLength(1);
  return rows as Array<[string, Entry]>;
}

describe.each(STORES)("maxAge/onStale on a %s store", (_name, open) => {
  it("without maxAge an old recording is served as it is", async () => {
    const store = open();
    await agedRecording(store, OLD);
    const recorder = createRecorder({ store, mode: "replay" });
    expect(await recorder.call(req, async () => ({ text: "live" }))).toStrictEqual({
      text: "recorded",
    });
    await store.close();
  });

  it("warn (default): served, a warning event each time, one process warning per entry", async () => {
    const store = open();
    const key = await agedRecording(store, OLD);
    const recorder = createRecorder({ store, mode: "replay", maxAge: "30d" });
    const events: string[] = [];
    recorder.on("warning", (w) => events.push(w.message));
    const processWarnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === "INVOCACHE_STALE") processWarnings.push(w.message);
    };
    process.on("warning", onWarning);
    try {
      for (let i = 0; i < 2; i++) {
        await recorder.run(async () => {
          expect(await recorder.call(req, async () => ({ text: "live" }))).toStrictEqual({
            text: "recorded",
          });
        });
      }
      await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(events).toHaveLength(2);
    expect(events[0]).toContain(`entry ${key} was recorded at ${OLD}, more than maxAge (30d) ago`);
    expect(processWarnings).toHaveLength(1);
    await store.close();
  });

  it("a recent recording is not stale", async () => {
    const store = open();
    await agedRecording(store, new Date().toISOString());
    const recorder = createRecorder({ store, mode: "replay", maxAge: "30d", onStale: "error" });
    expect(await recorder.call(req, async () => ({ text: "live" }))).toStrictEqual({
      text: "recorded",
    });
    await store.close();
  });

  it("error: a StaleEntryError in replay and in auto mode, and upstream is not called", async () => {
    const store = open();
    const key = await agedRecording(store, OLD);
    for (const mode of ["replay", "auto"] as const) {
      const recorder = createRecorder({ store, mode, maxAge: 86_400_000, onStale: "error" });
      let calls = 0;
      const e = await recorder
        .call(req, async () => {
          calls++;
          return { text: "live" };
        })
        .catch((x: unknown) => x);
      expect(e, mode).toBeInstanceOf(StaleEntryError);
      expect((e as StaleEntryError).key).toBe(key);
      expect((e as StaleEntryError).recordedAt).toBe(OLD);
      expect((e as StaleEntryError).message).toMatch(/INVOCACHE_MODE=record.*maxAge/);
      expect(calls).toBe(0);
    }
    await store.close();
  });

  it("rerecord: a miss in replay; auto records it anew, and the new one is fresh", async () => {
    const store = open();
    const key = await agedRecording(store, OLD);
    const replayer = createRecorder({ store, mode: "replay", maxAge: "1d", onStale: "rerecord" });
    await expect(replayer.call(req, async () => ({ text: "live" }))).rejects.toBeInstanceOf(
      ReplayMissError,
    );
    // The replay miss lost nothing: the old recording is still there.
    expect(((await store.get(key)) as unknown as Entry).meta.recordedAt).toBe(OLD);

    const auto = createRecorder({ store, mode: "auto", maxAge: "1d", onStale: "rerecord" });
    let calls = 0;
    const out = await auto.call(req, async () => {
      calls++;
      return { text: "fresh" };
    });
    expect([out, calls]).toStrictEqual([{ text: "fresh" }, 1]);
    await auto.close();
    const entry = (await all(store))[0]![1];
    expect(entry.response).toStrictEqual({ text: "fresh" });
    expect(Date.parse(entry.meta.recordedAt)).toBeGreaterThan(Date.now() - 60_000);
    await store.close();
  });

  it("refuses a maxAge or onStale it does not know, naming the option", async () => {
    const store = open();
    expect(() => createRecorder({ store, maxAge: "soon" })).toThrow(/maxAge/);
    expect(() => createRecorder({ store, maxAge: "1d", onStale: "later" as never })).toThrow(
      /onStale must be "warn", "error" or "rerecord"/,
    );
    await store.close();
  });
});

describe("store defaults (store.policy)", () => {
  it("a store's maxAge/onStale apply when the recorder sets none; the recorder's own win", async () => {
    const inner = openStore("memory://");
    // The memory store with a cassette-like policy, delegating everything else.
    const store: Store = {
      url: inner.url,
      policy: { maxAge: "1d", onStale: "error" },
      get: (k) => inner.get(k),
      set: (k, v, o) => inner.set(k, v, o),
      delete: (k) => inner.delete(k),
      list: (p) => inner.list(p),
      acquireLease: (k, o, t) => inner.acquireLease(k, o, t),
      releaseLease: (k, o) => inner.releaseLease(k, o),
      close: () => inner.close(),
    };
    await agedRecording(store, OLD);
    const byStore = createRecorder({ store, mode: "replay" });
    await expect(byStore.call(req, async () => ({}))).rejects.toBeInstanceOf(StaleEntryError);
    const own = createRecorder({ store, mode: "replay", onStale: "warn" });
    expect(await own.call(req, async () => ({}))).toStrictEqual({ text: "recorded" });
    await inner.close();
  });
});

describe("the staleness view keeps the store's optional capabilities", () => {
  it("forwards deleteIfUnchanged, listByRecordedAt, listsInKeyOrder and policy; adds none the store lacks", async () => {
    const path = join(dir, `view-${n++}.sqlite`);
    const writable = openStore(`sqlite://${path}`);
    const key = await agedRecording(writable, OLD);
    const events = new Emitter();
    const staleness = resolveStaleness({ maxAge: "30d" }, undefined);
    const modes = resolveKindModes("replay", {});

    const view = stalenessView(writable, staleness, events, modes);
    expect(view).not.toBe(writable);
    expect(view.listsInKeyOrder).toBe(writable.listsInKeyOrder);
    expect(typeof view.deleteIfUnchanged).toBe("function");
    const [, value] = (await all(writable))[0]!;
    expect(await view.deleteIfUnchanged!(key, valueDigest(value as never))).toBe(true);
    expect(await writable.get(key)).toBeUndefined();
    await writable.close();

    // Read-only SQLite sorts by recordedAt inside the database: the view says so too.
    const seeded = openStore(`sqlite://${path}`);
    await agedRecording(seeded, OLD);
    await seeded.close();
    const readOnly = openStore(`sqlite://${path}`, { readOnly: true });
    expect(readOnly.listByRecordedAt).toBeDefined();
    const roView = stalenessView(readOnly, staleness, events, modes);
    const listed: string[] = [];
    for await (const [k] of roView.listByRecordedAt!("default:e:")) listed.push(k);
    expect(listed).toHaveLength(1);
    await readOnly.close();

    // A store without them: the view has none either (callers test for presence).
    const policy = { maxAge: "1d" } as const;
    const bare: Store = {
      url: "bare://",
      policy,
      get: async () => undefined,
      set: async () => {},
      delete: async () => false,
      list: async function* () {},
      acquireLease: async () => true,
      releaseLease: async () => {},
      close: async () => {},
    };
    const bareView = stalenessView(bare, staleness, events, modes);
    expect(bareView.policy).toBe(policy);
    for (const name of ["deleteIfUnchanged", "listByRecordedAt", "listsInKeyOrder"]) {
      expect(name in bareView, name).toBe(false);
    }
  });
});
