/**
 * `invocache rekey`, run in process against real recordings: a YAML
 * cassette recorded through the real openai SDK and createFetch (then
 * replayed against a loopback provider), and SQLite, Redis and PostgreSQL
 * stores written by the recorder.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFetch } from "../../src/adapters/index.js";
import { cassetteStore, readCassette, rewriteCassette } from "../../src/cassette/index.js";
import { TABLE_HISTORY } from "../../src/cli/rekey/table-history.js";
import { runCli } from "../../src/cli/run.js";
import {
  createRecorder,
  invocationIdentity,
  NORMALIZATION_VERSION,
  stampArtifact,
} from "../../src/index.js";
import type { JsonValue } from "../../src/json/index.js";
import { type Entry, entryKey, openStore, type Store } from "../../src/store/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";
import { usePostgresServer, useRedisServer } from "../helpers/servers.js";
import { tempDir } from "../helpers/tmp.js";
import { fakeIo } from "./in-process.js";

interface RekeyJson {
  dryRun: boolean;
  matched: number;
  unchanged: number;
  moved: Array<{ key: string; toKey: string; id: string; toId: string }>;
  retired: Array<{ key: string; toKey: string }>;
  replaced: Array<{ key: string }>;
  conflicts: Array<{ key: string; keys: string[]; kept?: string }>;
  stamps: Array<{ artifact: string; id: string; toId: string }>;
  renormalized: number;
  reRecord: Array<{ key: string; why: string }>;
  relinked: number;
}

async function rekey(cwd: string, args: string[]) {
  const io = fakeIo(cwd);
  const code = await runCli(["rekey", ...args], io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

async function rekeyJson(cwd: string, args: string[]): Promise<RekeyJson> {
  const r = await rekey(cwd, [...args, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RekeyJson;
}

describe("rekey --cassette: a recording made before the SDK sent a new body field", () => {
  let provider: FakeProvider;
  beforeAll(async () => {
    provider = await startFakeProvider();
  });
  afterAll(async () => {
    await provider.close();
  });

  function client(file: string, mode: "record" | "replay") {
    const recorder = createRecorder({ store: cassetteStore(file), mode });
    const openai = new OpenAI({
      apiKey: "sk-test-not-a-secret",
      baseURL: `${provider.url}/v1`,
      fetch: createFetch({ recorder }),
      maxRetries: 0,
    });
    return { recorder, openai };
  }
  const messages = [{ role: "user" as const, content: "Plan the build" }];

  it("misses with the field, re-keys (dry run first), then hits with 0 upstream calls", async () => {
    const cwd = tempDir("rekey-sdk");
    const file = join(cwd, "planner.yaml");
    const rec = client(file, "record");
    const live = await rec.openai.chat.completions.create({ model: "gpt-fake", messages });
    await rec.recorder.close();
    expect(provider.calls).toBe(1);

    // The SDK now sends parallel_tool_calls by default: the recording misses.
    const before = client(file, "replay");
    await expect(
      before.openai.chat.completions.create({
        model: "gpt-fake",
        messages,
        parallel_tool_calls: true,
      }),
    ).rejects.toThrow();
    await before.recorder.close();

    const bytes = readFileSync(file);
    const dry = await rekeyJson(cwd, [
      "--cassette",
      file,
      "--set",
      "params.parallel_tool_calls=true",
      "--dry-run",
    ]);
    expect(dry).toMatchObject({ dryRun: true, matched: 1, unchanged: 0 });
    expect(dry.moved).toHaveLength(1);
    expect(readFileSync(file)).toStrictEqual(bytes);

    const done = await rekeyJson(cwd, [
      "--cassette",
      file,
      "--set",
      "params.parallel_tool_calls=true",
    ]);
    expect(done.moved.map((m) => m.toId)).toStrictEqual(dry.moved.map((m) => m.toId));

    const after = client(file, "replay");
    const replayed = await after.openai.chat.completions.create({
      model: "gpt-fake",
      messages,
      parallel_tool_calls: true,
    });
    await after.recorder.close();
    expect(replayed.choices[0]?.message.content).toBe(live.choices[0]?.message.content);
    expect(provider.calls).toBe(1);
    // Run again: nothing left to change.
    const again = await rekeyJson(cwd, [
      "--cassette",
      file,
      "--set",
      "params.parallel_tool_calls=true",
    ]);
    expect(again).toMatchObject({ matched: 1, unchanged: 1, moved: [] });
  });
});

const NOW = Date.now();
const iso = (daysAgo: number) => new Date(NOW - daysAgo * 86_400_000).toISOString();

/** Record through the recorder: each request answered "answer of <prompt>". */
async function record(store: Store, namespace: string, reqs: Array<Record<string, unknown>>) {
  const recorder = createRecorder({ store, namespace, mode: "record" });
  for (const req of reqs) {
    await recorder.call(req as never, async () => ({ text: `answer of ${String(req.prompt)}` }));
  }
  await recorder.close();
}

async function entries(store: Store, namespace: string): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>();
  for await (const [key, value] of store.list(`${namespace}:e:`)) out.set(key, value as never);
  return out;
}

function storeSuite(name: string, url: () => string, skip = false) {
  describe.skipIf(skip)(`rekey --store ${name}`, () => {
    const cwd = tempDir(`rekey-${name}`);

    async function withStore<T>(f: (s: Store) => Promise<T>): Promise<T> {
      const store = openStore(url());
      try {
        return await f(store);
      } finally {
        await store.close();
      }
    }

    it("moves exactly the --where entries; the re-keyed request hits, the others are untouched", async () => {
      const ns = `w${randomBytes(4).toString("hex")}`;
      const planner = { role: "planner", model: "gpt-5", prompt: "Plan it" };
      const builder = { role: "builder", model: "gpt-5", prompt: "Build it" };
      await withStore((s) => record(s, ns, [planner, builder]));
      const report = await rekeyJson(cwd, [
        "--store",
        url(),
        "--namespace",
        ns,
        "--set",
        "params.parallel_tool_calls=true",
        "--where",
        "role=planner",
      ]);
      const newId = invocationIdentity({ ...planner, params: { parallel_tool_calls: true } });
      expect(report.moved.map((m) => m.toKey)).toStrictEqual([entryKey(ns, newId, 0)]);
      const keys = await withStore(async (s) => [...(await entries(s, ns)).keys()].sort());
      expect(keys).toStrictEqual(
        [entryKey(ns, newId, 0), entryKey(ns, invocationIdentity(builder), 0)].sort(),
      );
      // The request with the new field now replays the recorded answer.
      const answer = await withStore(async (s) => {
        const recorder = createRecorder({ store: s, namespace: ns, mode: "replay" });
        const a = await recorder.call(
          { ...planner, params: { parallel_tool_calls: true } },
          async () => {
            throw new Error("no upstream in replay");
          },
        );
        await recorder.close();
        return a;
      });
      expect(answer).toStrictEqual({ text: "answer of Plan it" });
    });

    it("refuses a conflict naming both entries and changes nothing; --prefer newest keeps the newer", async () => {
      const ns = `c${randomBytes(4).toString("hex")}`;
      const plain = { role: "r", model: "m", prompt: "same" };
      const seeded = { ...plain, params: { seed: 7 } };
      await withStore((s) => record(s, ns, [plain, seeded]));
      // Make the seeded one the newer recording.
      const seededKey = entryKey(ns, invocationIdentity(seeded), 0);
      const plainKey = entryKey(ns, invocationIdentity(plain), 0);
      await withStore(async (s) => {
        const p = (await s.get(plainKey)) as unknown as Entry;
        await s.set(plainKey, { ...p, meta: { ...p.meta, recordedAt: iso(3) } } as never);
      });
      const before = await withStore((s) => entries(s, ns));
      const refused = await rekey(cwd, [
        "--store",
        url(),
        "--namespace",
        ns,
        "--unset",
        "params.seed",
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(seededKey);
      expect(refused.stderr).toContain(plainKey);
      expect(refused.stderr).toContain("--prefer");
      expect(await withStore((s) => entries(s, ns))).toStrictEqual(before);

      const report = await rekeyJson(cwd, [
        "--store",
        url(),
        "--namespace",
        ns,
        "--unset",
        "params.seed",
        "--prefer",
        "newest",
      ]);
      expect(report.conflicts).toStrictEqual([
        { key: plainKey, keys: [plainKey, seededKey], kept: seededKey },
      ]);
      expect(report.replaced.map((r) => r.key)).toStrictEqual([plainKey]);
      const after = await withStore((s) => entries(s, ns));
      expect([...after.keys()]).toStrictEqual([plainKey]);
      expect(after.get(plainKey)?.response).toStrictEqual({ text: "answer of same" });
      expect(after.get(plainKey)?.meta.recordedAt).toBe(before.get(seededKey)?.meta.recordedAt);
    });

    it("finishes a re-key a crash interrupted between its writes and its deletes", async () => {
      const ns = `k${randomBytes(4).toString("hex")}`;
      const req = { role: "r", model: "m", prompt: "crash" };
      await withStore((s) => record(s, ns, [req]));
      const oldKey = entryKey(ns, invocationIdentity(req), 0);
      const newId = invocationIdentity({ ...req, params: { n: 1 } });
      const newKey = entryKey(ns, newId, 0);
      // What the crashed run left: the new copy written, the old key not deleted yet.
      await withStore(async (s) => {
        const e = (await s.get(oldKey)) as unknown as Entry;
        const manifest = { ...e.manifest, params: { n: 1 } };
        await s.set(newKey, { ...e, id: newId, manifest } as unknown as JsonValue);
      });
      const report = await rekeyJson(cwd, [
        "--store",
        url(),
        "--namespace",
        ns,
        "--set",
        "params.n=1",
      ]);
      expect(report.conflicts).toStrictEqual([]);
      expect(report.retired.map((r) => r.key)).toStrictEqual([oldKey]);
      expect([...(await withStore((s) => entries(s, ns))).keys()]).toStrictEqual([newKey]);
    });
  });
}

const sqliteDir = tempDir("rekey-sqlite");
storeSuite("sqlite", () => `sqlite://${join(sqliteDir, "cache.sqlite")}`);
const redis = useRedisServer();
storeSuite("redis", () => redis.url(), redis.skip);
const postgres = usePostgresServer();
storeSuite("postgres", () => postgres.url(), postgres.skip);

describe("rekey: stamps and usage errors", () => {
  it("reports a provenance stamp that names a re-keyed identity", async () => {
    const cwd = tempDir("rekey-stamps");
    const file = join(cwd, "c.yaml");
    const store = cassetteStore(file);
    const recorder = createRecorder({ store, mode: "record" });
    await recorder.call({ role: "planner", model: "m", prompt: "stamp me" }, async () => ({
      text: "plan",
    }));
    const last = recorder.last!;
    await recorder.close();
    writeFileSync(join(cwd, "plan.md"), "plan");
    await stampArtifact(join(cwd, "plan.md"), {
      id: last.id,
      manifest: last.manifest,
      occurrence: 0,
      replayed: false,
    });
    const report = await rekeyJson(cwd, ["--cassette", file, "--set", 'model="m2"', "--dry-run"]);
    expect(report.stamps).toStrictEqual([
      { artifact: "plan.md", line: 1, id: last.id, toId: report.moved[0]!.toId },
    ]);
    const text = await rekey(cwd, ["--cassette", file, "--set", 'model="m2"']);
    expect(text.stdout).toContain("plan.md (line 1)");
    expect(text.stdout).toContain("invocache stamp");
  });

  it("names the option of a bad change", async () => {
    const cwd = tempDir("rekey-usage");
    expect((await rekey(cwd, [])).code).toBe(2);
    const bad = await rekey(cwd, ["--set", "params.x=not json"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--set params.x");
    const attempt = await rekey(cwd, ["--set", "attempt=1"]);
    expect(attempt.code).toBe(2);
    const where = await rekey(cwd, ["--set", "params.x=1", "--where", "colour=red"]);
    expect(where.stderr).toContain("--where");
  });
});

describe("rekey --renormalize: a cassette recorded under normalization table 1", () => {
  it("marks the entries that hold under the current table, lists exactly those that need their raw prompt", async () => {
    const cwd = tempDir("rekey-renormalize");
    const file = join(cwd, "old.yaml");
    const reqs = {
      plain: { role: "planner", model: "m", prompt: "Plan the app" },
      uuid: {
        role: "planner",
        model: "m",
        prompt: "Resume session 3F2504E0-4F89-11D3-9A0C-0305E82C3301",
      },
      fenced: { role: "builder", model: "m", prompt: "Fix this:\n```ts\nconst a =  1;\n```" },
      current: { role: "reviewer", model: "m", prompt: "Review it" },
    };
    const recorder = createRecorder({ store: cassetteStore(file), mode: "record" });
    for (const req of Object.values(reqs)) {
      await recorder.call(req, async () => ({ text: `answer of ${req.role}` }));
    }
    await recorder.close();
    const key = (name: keyof typeof reqs) => entryKey("default", invocationIdentity(reqs[name]), 0);
    // What table 1 wrote for these prompts: the same manifests, stamped table 1.
    await rewriteCassette(file, (items) =>
      items.map((item) => {
        if (item.key === key("current")) return item;
        const e = item.value as unknown as Entry;
        return { ...item, value: { ...e, meta: { ...e.meta, normalization: 1 } } as never };
      }),
    );
    const bytes = readFileSync(file);
    const dry = await rekeyJson(cwd, ["--cassette", file, "--renormalize", "--dry-run"]);
    expect(readFileSync(file)).toStrictEqual(bytes);
    const report = await rekeyJson(cwd, ["--cassette", file, "--renormalize"]);
    for (const r of [dry, report]) {
      expect(r.reRecord.map((x) => x.key).sort()).toStrictEqual(
        [key("uuid"), key("fenced")].sort(),
      );
      expect(r.reRecord.find((x) => x.key === key("uuid"))?.why).toContain("{uuid}");
      expect(r).toMatchObject({ matched: 4, renormalized: 1, unchanged: 1, moved: [] });
    }
    const after = new Map(
      (await readCassette(file)).map((i) => [i.key, i.value as unknown as Entry]),
    );
    expect([...after.keys()].sort()).toStrictEqual(
      Object.keys(reqs)
        .map((n) => key(n as never))
        .sort(),
    );
    expect(after.get(key("plain"))?.meta.normalization).toBe(NORMALIZATION_VERSION);
    expect(after.get(key("uuid"))?.meta.normalization).toBe(1);
    expect(after.get(key("fenced"))?.meta.normalization).toBe(1);
    // Run again: the marked entry is current now; the re-record list stays.
    const again = await rekeyJson(cwd, ["--cassette", file, "--renormalize"]);
    expect(again).toMatchObject({ renormalized: 0, unchanged: 2 });
    expect(again.reRecord).toHaveLength(2);
  });

  it("knows what every table after the first changed", () => {
    for (let v = 2; v <= NORMALIZATION_VERSION; v++)
      expect(TABLE_HISTORY[v], `table ${v}`).toBeDefined();
  });
});

describe("rekey --cassette FOLDER", () => {
  it("--where cassette=FILE rewrites that file only; the other keeps its bytes", async () => {
    const cwd = tempDir("rekey-folder");
    const dir = join(cwd, "cassettes");
    const req = { role: "planner", model: "m", prompt: "Plan the folder" };
    for (const name of ["a.yaml", "sub/b.yaml"]) {
      const recorder = createRecorder({ store: cassetteStore(join(dir, name)), mode: "record" });
      await recorder.call(req, async () => ({ text: `answer in ${name}` }));
      await recorder.close();
    }
    const untouched = readFileSync(join(dir, "a.yaml"));
    const report = await rekeyJson(cwd, [
      "--cassette",
      dir,
      "--set",
      "params.n=1",
      "--where",
      "cassette=sub/b.yaml",
    ]);
    const newId = invocationIdentity({ ...req, params: { n: 1 } });
    expect(report.moved).toStrictEqual([
      {
        key: entryKey("default", invocationIdentity(req), 0),
        toKey: entryKey("default", newId, 0),
        id: invocationIdentity(req),
        toId: newId,
        cassette: "sub/b.yaml",
      },
    ]);
    expect(readFileSync(join(dir, "a.yaml"))).toStrictEqual(untouched);
    const b = await readCassette(join(dir, "sub/b.yaml"));
    expect(b.map((i) => i.key)).toStrictEqual([entryKey("default", newId, 0)]);
    expect((b[0]!.value as unknown as Entry).response).toStrictEqual({
      text: "answer in sub/b.yaml",
    });
  });
});

describe("rekey and retries", () => {
  it("a retry that stays names its parent's new id", async () => {
    const cwd = tempDir("rekey-lineage");
    const file = join(cwd, "retry.yaml");
    const recorder = createRecorder({ store: cassetteStore(file), mode: "record" });
    const step = { role: "builder", model: "m", prompt: "Build it", task: "T-1" };
    await recorder.run(async () => {
      await recorder.call({ ...step, params: { x: 1 } }, async () => ({ text: "first" }), {
        attempt: 0,
      });
      await recorder.verdict(recorder.last!.id, "rejected");
      await recorder.call(step, async () => ({ text: "second" }), { attempt: 1 });
    });
    await recorder.close();
    const parentId = invocationIdentity({ ...step, params: { x: 1 } }, { attempt: 0 });
    const retryKey = entryKey("default", invocationIdentity(step, { attempt: 1 }), 0);
    const before = new Map(
      (await readCassette(file)).map((i) => [i.key, i.value as unknown as Entry]),
    );
    expect(before.get(retryKey)?.meta.parent).toBe(parentId);

    const report = await rekeyJson(cwd, ["--cassette", file, "--unset", "params.x"]);
    const newParent = invocationIdentity(step, { attempt: 0 });
    expect(report.moved.map((m) => m.toId)).toStrictEqual([newParent]);
    expect(report).toMatchObject({ relinked: 1 });
    const after = new Map(
      (await readCassette(file)).map((i) => [i.key, i.value as unknown as Entry]),
    );
    expect(after.get(retryKey)?.meta.parent).toBe(newParent);
    expect(after.get(retryKey)?.response).toStrictEqual({ text: "second" });
  });
});
