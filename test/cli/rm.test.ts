/**
 * `invocache rm <prefix>`: drops one entry (every occurrence), `--dry-run`
 * changes nothing, an ambiguous prefix lists the candidates and removes
 * nothing; unknown commands get a "did you mean", other tools' words too.
 * Real SQLite files and a real YAML cassette, the command run in process.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { runCli } from "../../src/cli/run.js";
import { createRecorder } from "../../src/index.js";
import { entryKey, openStore, type Store } from "../../src/store/index.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

const machine = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

async function rm(cwd: string, args: string[]) {
  const io = fakeIo(cwd);
  const code = await runCli(["rm", ...args], io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** Record `prompts` (the first one twice, in a run: occurrences 0 and 1) and return their ids. */
async function recordInto(store: Store, prompts: string[]): Promise<string[]> {
  const recorder = createRecorder({ store, mode: "auto", identity: machine });
  const ids: string[] = [];
  await recorder.run(async () => {
    for (const [i, prompt] of prompts.entries()) {
      const times = i === 0 ? 2 : 1;
      for (let n = 0; n < times; n++) {
        await recorder.call({ role: "r", model: "m", prompt }, async () => ({ text: prompt }));
        ids.push(recorder.last!.id);
      }
    }
  });
  await recorder.close();
  return [...new Set(ids)];
}

describe("invocache rm", () => {
  it("removes every occurrence of one entry by prefix; --dry-run removes nothing", async () => {
    const dir = tempDir("cli-rm");
    const url = `sqlite://${join(dir, "s.sqlite")}`;
    const store = openStore(url);
    const [a, b] = await recordInto(store, ["plan", "build"]);
    await store.close();

    const dry = await rm(dir, [a!.slice(0, 8), "--store", url, "--dry-run", "--json"]);
    expect(dry.code, dry.err).toBe(0);
    const planned = JSON.parse(dry.out) as { dryRun: boolean; removed: Array<{ key: string }> };
    expect(planned.dryRun).toBe(true);
    expect(planned.removed.map((r) => r.key).sort()).toEqual([
      entryKey("default", a!, 0),
      entryKey("default", a!, 1),
    ]);

    const check = openStore(url);
    expect(await check.get(entryKey("default", a!, 0))).toBeDefined();
    await check.close();

    const real = await rm(dir, [a!.slice(0, 12), "--store", url]);
    expect(real.code, real.err).toBe(0);
    expect(real.out).toContain(`removed 2 entries of ${a!.slice(0, 12)} from`);
    const after = openStore(url);
    expect(await after.get(entryKey("default", a!, 0))).toBeUndefined();
    expect(await after.get(entryKey("default", a!, 1))).toBeUndefined();
    expect(await after.get(entryKey("default", b!, 0))).toBeDefined();
    await after.close();
  });

  it("--occurrence removes one occurrence; a cassette is rewritten without it", async () => {
    const dir = tempDir("cli-rm-cassette");
    const path = join(dir, "c.yaml");
    const store = cassetteStore(path, { parseCache: false });
    const [a] = await recordInto(store, ["plan"]);
    await store.close();
    const r = await rm(dir, [a!.slice(0, 8), "--cassette", path, "--occurrence", "1"]);
    expect(r.code, r.err).toBe(0);
    const again = cassetteStore(path, { parseCache: false });
    expect(await again.get(entryKey("default", a!, 0))).toBeDefined();
    expect(await again.get(entryKey("default", a!, 1))).toBeUndefined();
    await again.close();
  });

  it("an ambiguous prefix lists the candidates and removes nothing", async () => {
    const dir = tempDir("cli-rm-ambiguous");
    const url = `sqlite://${join(dir, "s.sqlite")}`;
    const store = openStore(url);
    await recordInto(store, ["plan"]);
    // Two entries whose ids share 8 hex characters, copied under crafted ids.
    let value: unknown;
    for await (const [k, v] of store.list("default:e:")) if (k.endsWith(":0")) value = v;
    const ids = [`abcdef01${"1".repeat(56)}`, `abcdef01${"2".repeat(56)}`];
    for (const id of ids)
      await store.set(entryKey("default", id, 0), { ...(value as object), id } as never);
    await store.close();

    const r = await rm(dir, ["abcdef01", "--store", url]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/prefix abcdef01 is ambiguous: 2 ids .* use a longer prefix/);
    for (const id of ids) expect(r.err).toContain(id.slice(0, 16));
    const check = openStore(url);
    for (const id of ids) expect(await check.get(entryKey("default", id, 0))).toBeDefined();
    await check.close();
  });

  it("other tools' words for a command suggest ours", async () => {
    for (const [word, ours] of [
      ["delete", "rm"],
      ["remove", "rm"],
      ["list", "ls"],
    ]) {
      const io = fakeIo(tempDir("cli-rm-words"));
      expect(await runCli([word!], io)).toBe(2);
      expect(io.stderr()).toContain(`unknown command "${word}" (did you mean ${ours}?)`);
    }
  });
});
