/**
 * `invocache stats` counts distinct ids per namespace, the same from a store
 * that lists in key order (SQLite: counted by comparing each key with the
 * one before, in constant memory) and from a cassette (counted with a set).
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder, openStore, type Store } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

const cwd = tempDir("cli-stats-ids");
const sqliteUrl = `sqlite://${join(cwd, "ids.sqlite")}`;
const cassette = join(cwd, "ids.yaml");

/** Namespace a: X twice in one run (occurrences 0 and 1) and Y; namespace b: X. */
async function seed(open: () => Store): Promise<void> {
  const x = { role: "planner", model: "m", prompt: "X" };
  const y = { role: "planner", model: "m", prompt: "Y" };
  for (const [namespace, calls] of [
    ["a", [x, x, y]],
    ["b", [x]],
  ] as const) {
    const store = open();
    const recorder = createRecorder({ store, namespace, mode: "record" });
    await recorder.run(async () => {
      for (const req of calls) await recorder.call(req, async () => ({ text: req.prompt }));
    });
    await recorder.close();
    await store.close();
  }
}

beforeAll(async () => {
  await buildCli();
  await seed(() => openStore(sqliteUrl));
  await seed(() => cassetteStore(cassette, { env: {}, parseCache: false }));
}, BUILD_TIMEOUT);

describe("stats: distinct ids", () => {
  it("SQLite lists in key order: 4 entries, 3 ids (a/X, a/Y, b/X)", async () => {
    const store = openStore(sqliteUrl, { readOnly: true });
    expect(store.listsInKeyOrder).toBe(true);
    await store.close();
    const out = cli(["stats", "--store", sqliteUrl, "--json"], { cwd }).json<{
      entries: number;
      ids: number;
    }>();
    expect(out).toMatchObject({ entries: 4, ids: 3 });
  });

  it("a cassette gives the same count", () => {
    const out = cli(["stats", "--cassette", cassette, "--json"], { cwd }).json<{
      entries: number;
      ids: number;
    }>();
    expect(out).toMatchObject({ entries: 4, ids: 3 });
  });
});
