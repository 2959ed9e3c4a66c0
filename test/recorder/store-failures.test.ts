/**
 * What each mode does when the store fails: `auto` answers from upstream and
 * says so (fail-open); `record` and `replay` throw the StoreError (fail-closed:
 * a recording run must not report success without its recordings, a replay
 * must not call upstream). Never a miss.
 */
import { describe, expect, it } from "vitest";
import {
  createRecorder,
  type InvocationRequest,
  type RecorderEvents,
  ReplayMissError,
  type Store,
  StoreError,
} from "../../src/index.js";

const req: InvocationRequest = { role: "builder", model: "gpt-5", prompt: "Build the app" };
const MACHINE = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

/** A store whose every operation fails, like a database that went away. */
function brokenStore(): Store {
  const fail = (operation: string) => async () => {
    throw new StoreError("sqlite:///data/cache.sqlite", operation, `${operation} failed`);
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

describe("store failures by mode", () => {
  it("auto is fail-open: the caller gets the upstream answer and a warning event", async () => {
    const r = createRecorder({ store: brokenStore(), mode: "auto", identity: MACHINE });
    const warnings: RecorderEvents["warning"][] = [];
    r.on("warning", (w) => warnings.push(w));
    let calls = 0;
    expect(await r.call(req, async () => ({ n: ++calls }))).toEqual({ n: 1 });
    expect(calls).toBe(1);
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((w) => w.error instanceof StoreError)).toBe(true);
  });

  it("record is fail-closed: a recording that cannot be written is the caller's StoreError", async () => {
    const r = createRecorder({ store: brokenStore(), mode: "record", identity: MACHINE });
    let calls = 0;
    const error = await r
      .call(req, async () => ({ n: ++calls }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(ReplayMissError);
    expect(calls).toBe(1);
    expect(r.stats.recorded).toBe(0);
  });

  it("replay is fail-closed: the StoreError is thrown and upstream is never called", async () => {
    const r = createRecorder({ store: brokenStore(), mode: "replay", identity: MACHINE });
    let calls = 0;
    const error = await r
      .call(req, async () => ({ n: ++calls }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(ReplayMissError);
    expect(calls).toBe(0);
  });
});
