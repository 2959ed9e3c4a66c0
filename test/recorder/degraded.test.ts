/**
 * A degraded cache is never silent: the first store failure of a recorder is
 * a process warning (Node's convention) with the cause and the fix, besides
 * the `warning` events. A malformed cassette is a fixture error, not an
 * outage: a CassetteError in every mode that reads or writes, and the live
 * API is never called in its place.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CassetteError,
  cassetteStore,
  createRecorder,
  type InvocationRequest,
  type Mode,
  openStore,
  type RecorderEvents,
  type Store,
  StoreError,
} from "../../src/index.js";
import { MACHINE, tempDir } from "../cassette/helpers.js";

const req: InvocationRequest = { role: "builder", model: "gpt-5", prompt: "Build the app" };

/** A store whose every operation fails, like a database that went away. */
function brokenStore(): Store {
  const fail = (operation: string) => async () => {
    throw new StoreError(
      "sqlite:///data/cache.sqlite",
      operation,
      `${operation} failed: disk I/O error`,
      {
        cause: Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" }),
      },
    );
  };
  return {
    url: "sqlite:///data/cache.sqlite",
    get: fail("get"),
    set: fail("set"),
    delete: fail("delete"),
    // biome-ignore lint/correctness/useYield: fails before yielding anything
    async *list() {
      throw new StoreError("sqlite:///data/cache.sqlite", "list", "list failed");
    },
    acquireLease: fail("acquireLease"),
    releaseLease: fail("releaseLease"),
    close: async () => {},
  } as Store;
}

describe("a degraded cache is never silent", () => {
  let processWarnings: (Error & { code?: string; detail?: string })[] = [];
  const onWarning = (w: Error) => processWarnings.push(w);
  beforeEach(() => {
    processWarnings = [];
    process.on("warning", onWarning);
  });
  afterEach(() => {
    process.off("warning", onWarning);
  });
  const settle = () => new Promise((r) => setImmediate(r));

  it("the first store failure is a process warning with the cause and the fix; every failure is an event", async () => {
    const r = createRecorder({ store: brokenStore(), mode: "auto", identity: MACHINE });
    const events: RecorderEvents["warning"][] = [];
    r.on("warning", (w) => events.push(w));
    let calls = 0;
    for (let i = 0; i < 3; i++) {
      expect(await r.call({ ...req, prompt: `step ${i}` }, async () => ({ n: ++calls }))).toEqual({
        n: i + 1,
      });
    }
    await settle();
    const degraded = processWarnings.filter((w) => w.code === "INVOCACHE_STORE_DEGRADED");
    expect(degraded).toHaveLength(1);
    expect(degraded[0]!.name).toBe("InvocacheWarning");
    expect(degraded[0]!.message).toContain("sqlite:///data/cache.sqlite");
    expect(degraded[0]!.message).toContain("disk I/O error");
    expect(`${degraded[0]!.message} ${degraded[0]!.detail}`).toMatch(/mode: "replay"/);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.every((e) => e.error instanceof StoreError)).toBe(true);
    // A second recorder on the same broken store says it again: once per recorder.
    const again = createRecorder({ store: brokenStore(), mode: "auto", identity: MACHINE });
    await again.call(req, async () => ({ n: ++calls }));
    await settle();
    expect(processWarnings.filter((w) => w.code === "INVOCACHE_STORE_DEGRADED")).toHaveLength(2);
  });

  it("a healthy store emits no process warning", async () => {
    const store = openStore("memory://");
    const r = createRecorder({ store, mode: "auto", identity: MACHINE });
    await r.call(req, async () => ({ ok: true }));
    await r.call(req, async () => ({ ok: true }));
    await settle();
    expect(processWarnings.filter((w) => w.code?.startsWith("INVOCACHE_"))).toEqual([]);
    await store.close();
  });
});

describe("a malformed cassette is a fixture error in every mode", () => {
  const dir = tempDir("malformed-cassette");
  const broken = "invocache: 1\nentries:\n  - id: [unclosed\n";

  it.each(["auto", "record", "verify", "replay"] as Mode[])(
    "%s: CassetteError, the live API is never called, the file is untouched",
    async (mode) => {
      const path = join(dir, `${mode}.yaml`);
      writeFileSync(path, broken);
      const store = cassetteStore(path, { parseCache: false });
      const r = createRecorder({ store, mode, identity: MACHINE });
      let calls = 0;
      const err = await r.call(req, async () => ({ n: ++calls })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CassetteError);
      expect((err as CassetteError).file).toBe(path);
      expect(calls).toBe(0);
      // Inside a run and through a stream too.
      await expect(
        r.run(async () => r.call({ ...req, prompt: "other" }, async () => ({ n: ++calls }))),
      ).rejects.toBeInstanceOf(CassetteError);
      await expect(
        r.stream(req, async () => ({ head: {}, events: (async function* () {})() })),
      ).rejects.toBeInstanceOf(CassetteError);
      expect(calls).toBe(0);
      await r.close();
      await store.close().catch(() => {});
      const { readFileSync } = await import("node:fs");
      expect(readFileSync(path, "utf8")).toBe(broken);
    },
  );
});
