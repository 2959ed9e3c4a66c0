/**
 * Reads on an open keyv store share one timer (src/store/deadlines.ts): each
 * read still fails with its own timeout error when its backend stops
 * answering, a late answer changes nothing, close() waits for reads in
 * flight, and the shared timer never holds a process open once no read is
 * in flight. The backend is the memory backend over a Map whose reads can be
 * held (a store that stops answering, as a frozen server does).
 */
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import type { Backend } from "../../src/store/backend.js";
import { createKeyv } from "../../src/store/backends/keyv.js";
import { KeyvStore } from "../../src/store/keyv-store.js";

/** A Map whose reads wait while `held` (the store stops answering). */
class HeldMap extends Map<string, string> {
  #release: (() => void) | undefined;
  #gate: Promise<void> | undefined;

  hold(): void {
    this.#gate = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  release(): void {
    this.#gate = undefined;
    this.#release?.();
  }

  override get(key: string): string | undefined {
    const gate = this.#gate;
    if (gate === undefined) return super.get(key);
    return gate.then(() => super.get(key)) as unknown as string | undefined;
  }
}

async function heldStore(timeoutMs: number): Promise<{ store: KeyvStore; map: HeldMap }> {
  const map = new HeldMap();
  const keyv = await createKeyv(map);
  const backend: Backend = {
    keyv,
    keyPrefix: "",
    async *listRaw() {},
    getRecord: async () => undefined,
    deleteRecordIf: async () => false,
    acquireLease: async () => true,
    releaseLease: async () => {},
    close: async () => {},
  };
  const store = new KeyvStore("held://", async () => backend, { timeoutMs });
  await store.set("k", { a: 1 });
  // The short read path starts once the backend has opened (a turn later).
  await store.get("k");
  await new Promise((resolve) => setImmediate(resolve));
  return { store, map };
}

const settle = (p: Promise<unknown>, log: string[], name: string) =>
  p.then(
    (v) => {
      log.push(`${name} answered`);
      return v;
    },
    (e: unknown) => {
      log.push(`${name} failed`);
      return e;
    },
  );

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("store reads share one timer", () => {
  it("each held read fails with its own timeout error, in the order they started", async () => {
    // Half a timeout apart: the first one's timer would have to fire that late
    // for both to expire together.
    const { store, map } = await heldStore(500);
    map.hold();
    const log: string[] = [];
    const first = settle(store.get("k"), log, "first");
    await new Promise((resolve) => setTimeout(resolve, 250));
    const second = settle(store.get("k"), log, "second");
    const e1 = await first;
    // The second read started later: its timeout has not passed yet.
    expect(log).toEqual(["first failed"]);
    const e2 = await second;
    expect(log).toEqual(["first failed", "second failed"]);
    for (const e of [e1, e2]) {
      expect(e).toBeInstanceOf(StoreError);
      expect((e as StoreError).operation).toBe("get");
      expect((e as StoreError).message).toContain('get "k" failed: timed out after 500 ms');
    }
    // The store answers again: a read after the timeouts is served.
    map.release();
    expect(await store.get("k")).toEqual({ a: 1 });
    await store.close();
  });

  it("an answer after the timeout changes nothing; a read in time beside a held one is served", async () => {
    const { store, map } = await heldStore(100);
    map.hold();
    const held = store.get("k").then(
      () => "answered",
      (e: unknown) => e,
    );
    const timedOut = await held;
    expect(timedOut).toBeInstanceOf(StoreError);
    map.release(); // the late answer arrives: nobody hears it, nothing throws
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.get("k")).toEqual({ a: 1 });
    expect(await store.get("missing")).toBeUndefined();
    await store.close();
  });

  it("close waits for a read in flight", async () => {
    const { store, map } = await heldStore(5_000);
    map.hold();
    const log: string[] = [];
    const read = settle(store.get("k"), log, "read");
    const closed = store.close().then(() => log.push("closed"));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(log).toEqual([]);
    map.release();
    await Promise.all([read, closed]);
    expect(log).toEqual(["read answered", "closed"]);
    expect(await read).toEqual({ a: 1 });
    await expect(store.get("k")).rejects.toThrow(/the store is closed/);
  });

  it("holds the process open only while a read is in flight", async () => {
    const { store, map } = await heldStore(60_000);
    const before = timers();
    map.hold();
    const read = store.get("k");
    await new Promise((resolve) => setImmediate(resolve));
    // A read in flight keeps its deadline referenced: a frozen store still fails in time.
    expect(timers()).toBe(before + 1);
    map.release();
    expect(await read).toEqual({ a: 1 });
    // Nothing in flight: the armed timer no longer keeps the event loop alive.
    expect(timers()).toBe(before);
    for (let i = 0; i < 100; i++) await store.get("k");
    expect(timers()).toBe(before);
    await store.close();
  });
});
