/**
 * Cassettes under faults. A full file system: the write fails with a clear
 * error and the previous cassette stays intact and loadable. A writer
 * killed with SIGKILL mid-write: no torn file, and every recording the
 * writer had acknowledged is still there. (test/cassette/concurrency.test.ts
 * covers torn files and temp-file cleanup for raw store writes; this adds
 * the recorder's view: nothing it acknowledged is lost.)
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cassetteStore, readCassette } from "../../src/cassette/index.js";
import { recordingCassetteStore } from "../../src/cassette/internal.js";
import { lockPath } from "../../src/cassette/lock.js";
import {
  createRecorder,
  invocationIdentity,
  ReplayMissError,
  StoreError,
} from "../../src/index.js";
import { entryKey } from "../../src/store/index.js";
import {
  canMount,
  type ErrorInfo,
  errorInfo,
  IS_ROOT,
  mountTmpfs,
  skipWithout,
  sleep,
  startWorker,
  tempDir,
  unmount,
  workerScript,
} from "./helpers.js";

const IDENTITY = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const dir = tempDir("cassette-faults");

const skipFull = skipWithout(
  canMount(),
  "full file system test (256 KiB tmpfs)",
  IS_ROOT ? "root, but mounting a tmpfs is not permitted here" : "needs root to mount a tmpfs",
);

/** Fill the file system holding `folder` to the last byte; returns the filler's path. */
function fill(folder: string): string {
  const filler = join(folder, "filler.bin");
  const fd = openSync(filler, "w");
  try {
    for (const size of [65_536, 4_096, 512, 1]) {
      const chunk = Buffer.alloc(size, 0x5a);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

describe.skipIf(skipFull)("cassette folder on a full file system (256 KiB tmpfs)", () => {
  const mnt = join(dir, "tmpfs");
  beforeAll(() => {
    mkdirSync(mnt, { recursive: true });
    mountTmpfs(mnt, "256k");
  });
  afterAll(() => unmount(mnt));

  it("the write fails with a clear error, the previous cassette stays intact and loadable, no temp file is left; writes resume once there is room", async () => {
    const folder = join(mnt, "cassettes");
    const path = join(folder, "suite.yaml");
    const store = cassetteStore(path, { parseCache: false });
    const auto = createRecorder({ store, mode: "auto", identity: IDENTITY });
    const request = (i: number | string) => ({ role: "builder", model: "m", prompt: `step ${i}` });
    const answer = (i: number | string) => ({ step: i, text: `answer ${i} `.repeat(200) });
    for (let i = 0; i < 5; i++) await auto.call(request(i), async () => answer(i));
    const before = readFileSync(path);
    const keys = (await readCassette(path)).map((item) => item.key);
    expect(keys).toHaveLength(5);

    const filler = fill(mnt);
    const warnings: ErrorInfo[] = [];
    auto.on("warning", (w) => warnings.push(errorInfo(w.error)));

    // auto: the caller gets its answer; the failed write is a warning.
    expect(await auto.call(request("late"), async () => answer("late"))).toStrictEqual(
      answer("late"),
    );
    expect(warnings.length).toBeGreaterThan(0);
    for (const w of warnings) {
      expect(w.name).toBe("StoreError");
      expect(w.causes).toContain("ENOSPC");
      expect(w.message).toMatch(/no space left on device/);
    }
    // record: the failed write is the caller's error, and says what happened where.
    const record = createRecorder({ store, mode: "record", identity: IDENTITY });
    const error = await record
      .call(request("forced"), async () => answer("forced"))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(StoreError);
    const info = errorInfo(error);
    expect(info.causes).toContain("ENOSPC");
    expect(info.message).toContain(path);
    expect(info.message).toMatch(/ENOSPC: no space left on device/);
    expect(info.message).toMatch(/Check that the file and its folder are readable and writable/);
    await expect(store.set("direct", { x: 1 })).rejects.toBeInstanceOf(StoreError);

    // The previous cassette: byte for byte, loadable, replayable; no temp file beside it.
    expect(readFileSync(path).equals(before)).toBe(true);
    expect((await readCassette(path)).map((item) => item.key)).toStrictEqual(keys);
    expect(readdirSync(folder).filter((n) => n.endsWith(".tmp"))).toStrictEqual([]);
    const replayStore = cassetteStore(path, { parseCache: false });
    const replay = createRecorder({ store: replayStore, mode: "replay", identity: IDENTITY });
    for (let i = 0; i < 5; i++) {
      expect(await replay.call(request(i), async () => ({ live: true }))).toStrictEqual(answer(i));
    }
    await expect(replay.call(request("late"), async () => ({}))).rejects.toBeInstanceOf(
      ReplayMissError,
    );
    await replayStore.close();

    // Room again: the same store writes, and the file holds the old entries and the new one.
    rmSync(filler);
    await store.set("after", { ok: true });
    const after = (await readCassette(path)).map((item) => item.key);
    expect(after).toEqual(expect.arrayContaining([...keys, "after"]));
    await auto.close();
    await store.close();
  }, 30_000);
});

/** 16 KiB values that make every rewrite of the killed writer's cassette take a while (~2 MB). */
const FILLER = 120;

describe("kill -9 of a recorder writing a cassette", () => {
  it("leaves a loadable cassette holding every recording the killed writer had acknowledged", async () => {
    const path = join(dir, "killed", "recorder.yaml");
    const acknowledged: number[] = [];
    let midWrite = 0;
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      const first = acknowledged.length === 0 ? 0 : Math.max(...acknowledged) + 1;
      const writer = startWorker(workerScript("cassette-recorder.ts"), [
        path,
        String(first),
        round === 0 ? String(FILLER) : "0",
      ]);
      await writer.line((l) => l === "ready", 30_000);
      await writer.line((l) => l === `ok ${first + 3 + round}`, 30_000);
      await sleep(Math.random() * 20);
      writer.child.kill("SIGKILL");
      await writer.exited;
      for (const line of writer.lines) {
        const m = /^ok (\d+)$/.exec(line);
        if (m !== null) acknowledged.push(Number(m[1]));
      }
      if (readdirSync(join(dir, "killed")).some((n) => n.endsWith(".tmp"))) midWrite++;

      // Never torn: it parses, and nothing acknowledged is missing.
      const items = await readCassette(path);
      const byKey = new Map(items.map((item) => [item.key, item.value]));
      const lost = acknowledged.filter((i) => {
        const id = invocationIdentity(
          { role: "writer", model: "m", prompt: `step ${i}` },
          IDENTITY,
        );
        const value = byKey.get(entryKey("default", id, 0)) as { response?: unknown } | undefined;
        return JSON.stringify(value?.response) !== JSON.stringify({ step: i, text: `answer ${i}` });
      });
      expect(lost, `round ${round}: acknowledged recordings missing after kill -9`).toStrictEqual(
        [],
      );
      expect(items.filter((item) => item.key.startsWith("filler:"))).toHaveLength(FILLER);
      // Skip the wait for the dead writer's lock to go stale (the cassette tests wait it out).
      rmSync(lockPath(path), { recursive: true, force: true });
    }
    console.log(
      `kill -9 of a recorder: ${acknowledged.length} acknowledged recordings kept; ${midWrite} of ${rounds} kills left a temp file (mid-write)`,
    );
    // The next writer cleans up after the dead ones and carries on.
    const store = cassetteStore(path, { parseCache: false });
    await store.set("after", "recovered");
    await store.close();
    expect(readdirSync(join(dir, "killed")).filter((n) => n.endsWith(".tmp"))).toStrictEqual([]);
    const items = await readCassette(path);
    expect(items.at(-1)?.key).toBe("after");
  }, 60_000);
});

describe("kill -9 of a recorder appending to a cassette (recordingCassetteStore)", () => {
  it("every acknowledged recording is there on reopen; a torn tail is cut off with a warning, never silently", async () => {
    const path = join(dir, "killed-append", "recorder.yaml");
    const acknowledged: number[] = [];
    const warnings: string[] = [];
    const rounds = 4;
    let appendedSeen = 0;
    for (let round = 0; round < rounds; round++) {
      const first = acknowledged.length === 0 ? 0 : Math.max(...acknowledged) + 1;
      const writer = startWorker(workerScript("cassette-recorder.ts"), [
        path,
        String(first),
        round === 0 ? "20" : "0",
        "append",
      ]);
      await writer.line((l) => l === "ready", 30_000);
      await writer.line((l) => l === `ok ${first + 5 + round}`, 30_000);
      await sleep(Math.random() * 10);
      writer.child.kill("SIGKILL");
      await writer.exited;
      for (const line of writer.lines) {
        const m = /^ok (\d+)$/.exec(line);
        if (m !== null) acknowledged.push(Number(m[1]));
      }
      // The killed writer never closed: its recordings are appended records.
      if (readFileSync(path, "utf8").includes("--- # invocache-append ")) appendedSeen++;

      // A reader of the file as the kill left it (cassetteStore, as a replay would).
      const reader = cassetteStore(path, { parseCache: false, onWarning: (m) => warnings.push(m) });
      const byKey = new Map<string, unknown>();
      for await (const [key, value] of reader.list("")) byKey.set(key, value);
      await reader.close();
      const lost = acknowledged.filter((i) => {
        const id = invocationIdentity(
          { role: "writer", model: "m", prompt: `step ${i}` },
          IDENTITY,
        );
        const value = byKey.get(entryKey("default", id, 0)) as { response?: unknown } | undefined;
        return JSON.stringify(value?.response) !== JSON.stringify({ step: i, text: `answer ${i}` });
      });
      expect(lost, `round ${round}: acknowledged recordings missing after kill -9`).toStrictEqual(
        [],
      );
      expect([...byKey.keys()].filter((k) => k.startsWith("filler:"))).toHaveLength(20);
      rmSync(lockPath(path), { recursive: true, force: true });
    }
    expect(appendedSeen).toBe(rounds);
    // A torn tail is only possible mid-write; every warning there was says so.
    for (const w of warnings) expect(w).toMatch(/torn tail/);

    // Cut mid-record by hand (a crash mid-append): reported, and only that record is gone.
    const before = readFileSync(path);
    writeFileSync(path, before.subarray(0, before.length - 7));
    const cut: string[] = [];
    const reader = cassetteStore(path, { parseCache: false, onWarning: (m) => cut.push(m) });
    let count = 0;
    for await (const _ of reader.list("")) count++;
    await reader.close();
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatch(/cut off a torn tail of \d+ bytes/);

    // The next recording handle carries on; its close leaves the normal form.
    const store = recordingCassetteStore(path, { parseCache: false, onWarning: () => {} });
    await store.set("after", "recovered");
    await store.close();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("--- # invocache-append ");
    const items = await readCassette(path);
    expect(items).toHaveLength(count + 1);
    expect(items.at(-1)?.key).toBe("after");
  }, 60_000);
});
