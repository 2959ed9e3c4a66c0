/**
 * A folder that cannot be made must fail fast, never hang. Node's own
 * `mkdir(path, { recursive: true })` spins forever (promise never settles,
 * one core at 100 %) when `mkdir` answers ENOENT although the parent exists,
 * as procfs does for any new name: it reads ENOENT as "parent missing", makes
 * the parent (EEXIST, fine) and tries again. Every place invocache makes a
 * folder for the user goes through one helper that stops there.
 */
import { existsSync } from "node:fs";
import { readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeDirectory } from "../../src/files/index.js";
import { cassetteStore, openStore, StoreError } from "../../src/index.js";
import { BUILD_TIMEOUT, buildCli, cli } from "../cli/helpers.js";
import { tempDir } from "../helpers/tmp.js";

const PROC = existsSync("/proc/self") ? "/proc" : undefined;
/** Far longer than any of these should take, far shorter than the test timeout. */
const HANG_MS = 10_000;

function withinHangLimit<T>(p: Promise<T>): Promise<T | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), HANG_MS);
  });
  return Promise.race([p, hung]).finally(() => clearTimeout(timer));
}

const dir = tempDir("unmakeable-dir");

describe("makeDirectory", () => {
  it("makes every missing level and accepts an existing folder", async () => {
    const target = join(dir, "a", "b", "c");
    await makeDirectory(target);
    expect(existsSync(target)).toBe(true);
    await makeDirectory(target);
    expect(await readdir(join(dir, "a"))).toStrictEqual(["b"]);
  });

  it("fails with ENOTDIR when a level is a file", async () => {
    const file = join(dir, "plain");
    await writeFile(file, "x");
    await expect(makeDirectory(join(file, "sub", "dir"))).rejects.toMatchObject({
      code: "ENOTDIR",
    });
  });

  it("fails through a dangling symlink instead of following it", async () => {
    const link = join(dir, "dangling");
    await symlink(join(dir, "nowhere"), link);
    const err = await makeDirectory(join(link, "x")).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: expect.stringMatching(/^(ENOENT|ENOTDIR|EEXIST)$/) });
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
  });

  it.runIf(PROC)("fails with ENOENT under procfs instead of spinning", async () => {
    const outcome = await withinHangLimit(
      makeDirectory(`${PROC}/invocache-no-such-dir/sub`).then(
        () => "made",
        (e: NodeJS.ErrnoException) => e.code,
      ),
    );
    expect(outcome).toBe("ENOENT");
  });
});

describe.runIf(PROC)("callers that make folders fail fast under procfs", () => {
  it("a SQLite store under a folder that cannot be made is a StoreError", async () => {
    const outcome = await withinHangLimit(
      openStore(`sqlite://${PROC}/invocache-no-such-dir/cache.sqlite`)
        .get("k")
        .then(
          () => "read",
          (e: unknown) => e,
        ),
    );
    expect(outcome).toBeInstanceOf(StoreError);
  });

  it("a cassette write under a folder that cannot be made is a StoreError naming the path", async () => {
    const store = cassetteStore(`${PROC}/invocache-no-such-dir/sub/c.yaml`);
    const outcome = await withinHangLimit(
      store
        .set("k", { v: 1 } as never)
        .then(
          () => "written",
          (e: unknown) => e,
        )
        .finally(() => store.close?.()),
    );
    expect(outcome).toBeInstanceOf(StoreError);
    expect((outcome as StoreError).message).toContain(`${PROC}/invocache-no-such-dir`);
  });

  it(
    "invocache demo --out a folder that cannot be made exits with an error",
    async () => {
      await buildCli();
      const r = cli(["demo", "--store", "memory://", "--out", `${PROC}/invocache-x`], {
        cwd: dir,
      });
      // spawnSync kills a hung CLI after its timeout: status null.
      expect(r.status).not.toBeNull();
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`--out: cannot make the folder ${PROC}/invocache-x (ENOENT)`);
    },
    BUILD_TIMEOUT + 70_000,
  );
});
