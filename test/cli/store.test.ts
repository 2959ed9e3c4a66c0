/**
 * `ls`, `show`, `stats`, `prune`, `stamp` and `verify` against a real SQLite
 * store under the working directory (the default), seeded by the library.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createRecorder,
  INVOCACHE_VERSION,
  invocationIdentity,
  NORMALIZATION_VERSION,
  openStore,
} from "../../src/index.js";
import { defaultStoreUrl, type Entry, entryKey } from "../../src/store/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

const cwd = tempDir("cli-store");
const empty = tempDir("cli-empty");

/** Two ids that share their first 10 hex characters: crafted (validateEntry does not recompute ids). */
const SHARED = "abcdef0123";
const twinA = SHARED + randomBytes(27).toString("hex");
const twinB = SHARED + randomBytes(27).toString("hex");
const old = "0ld0".replace(/[^0-9a-f]/g, "0") + randomBytes(30).toString("hex");

function crafted(id: string, recordedAt: string, role: string): Entry {
  return {
    v: 1,
    id,
    manifest: {
      attempt: 0,
      inputs: [],
      model: "gpt-4o",
      prompt: `crafted ${role}`,
      role,
      task: "",
    },
    response: { text: `answer of ${role}` },
    meta: {
      recordedAt,
      durationMs: 250,
      normalization: NORMALIZATION_VERSION,
      invocacheVersion: INVOCACHE_VERSION,
      occurrence: 0,
      attempt: 0,
    },
  };
}

const plannerReq = { role: "planner", model: "gpt-5", prompt: "Plan the app", task: "T-1" };
const plannerId = invocationIdentity(plannerReq);

beforeAll(async () => {
  await buildCli();
  // Real recordings, through the recorder, into the default store of cwd.
  const recorder = createRecorder({ projectRoot: cwd, mode: "auto" });
  await recorder.call(plannerReq, async () => ({ text: "1. build 2. test" }));
  await recorder.call(
    { role: "builder", model: "gpt-5", prompt: "Build it" },
    async () => ({ text: "done" }),
    {
      attempt: 0,
    },
  );
  await recorder.verdict(recorder.last!.id, "rejected", { reason: "no tests" });
  await recorder.close();
  // Crafted ones, in another namespace, one of them a year old.
  const store = openStore(defaultStoreUrl(cwd));
  const now = new Date().toISOString();
  await store.set(entryKey("crafted", twinA, 0), crafted(twinA, now, "twin-a") as never);
  await store.set(entryKey("crafted", twinB, 0), crafted(twinB, now, "twin-b") as never);
  const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString();
  await store.set(entryKey("crafted", old, 0), crafted(old, yearAgo, "old") as never);
  await store.set(entryKey("crafted", randomBytes(32).toString("hex"), 0), { hello: "world" });
  await store.set("crafted:something-else", { not: "an entry key, so not listed" });
  await store.close();
}, BUILD_TIMEOUT);

interface LsJson {
  source: string;
  entries: Array<{
    key: string;
    namespace: string;
    id: string;
    shortId: string;
    occurrence: number;
    role: string;
    model: string;
    task: string;
    attempt: number;
    verdict: string | null;
    recordedAt: string;
    durationMs: number;
    bytes: number;
  }>;
  problems: unknown[];
}

describe("invocache ls", () => {
  it("--json lists every entry of the default store with a stable shape", () => {
    const r = cli(["ls", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const out = r.json<LsJson>();
    expect(out.source).toBe(`sqlite://${join(cwd, ".invocache", "cache.sqlite")}`);
    expect(out.entries).toHaveLength(5);
    const planner = out.entries.find((e) => e.id === plannerId)!;
    expect(Object.keys(planner).sort()).toEqual([
      "attempt",
      "bytes",
      "durationMs",
      "id",
      "key",
      "model",
      "namespace",
      "occurrence",
      "recordedAt",
      "role",
      "shortId",
      "task",
      "verdict",
    ]);
    expect(planner).toMatchObject({
      key: `default:e:${plannerId}:0`,
      namespace: "default",
      shortId: plannerId.slice(0, 12),
      role: "planner",
      model: "gpt-5",
      task: "T-1",
      attempt: 0,
      verdict: null,
    });
    expect(out.entries.find((e) => e.role === "builder")?.verdict).toBe("rejected");
    expect(out.entries[0]!.role).toBe("old"); // oldest first
  });

  it("filters by namespace and role; prints a table", () => {
    const r = cli(["ls", "--namespace", "default", "--role", "planner"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^id\s+occ\s+role\s+model\s+attempt\s+verdict\s+recorded\s+took\s+size\n/,
    );
    expect(r.stdout).toMatch(
      new RegExp(`^${plannerId.slice(0, 12)}\\s+0\\s+planner\\s+gpt-5\\s+0\\s+-`, "m"),
    );
    expect(r.stdout).toMatch(/1 entry \(1 id in namespace default\)/);
  });

  it("warns on stderr about a malformed entry and goes on", () => {
    const r = cli(["ls", "--namespace", "crafted"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/3 entries/);
    expect(r.stderr).toMatch(
      /^invocache: warning: skipped 1 malformed entry; first: invocache entry at .* is malformed: \$ must be an object|\$\.v must be 1/,
    );
  });

  it("a directory with no store: nothing recorded, exit 0, and no file is created", () => {
    const r = cli(["ls"], { cwd: empty });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Nothing recorded yet: sqlite:\/\/.* does not exist/);
    expect(cli(["ls", "--json"], { cwd: empty }).json<LsJson>().entries).toEqual([]);
    expect(existsSync(join(empty, ".invocache"))).toBe(false);
  });
});

describe("invocache show", () => {
  it("resolves a unique prefix and shows the entry", () => {
    const r = cli(["show", plannerId.slice(0, 8)], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^entry default:e:${plannerId}:0$`, "m"));
    expect(r.stdout).toMatch(/role\s+planner/);
    expect(r.stdout).toMatch(/"text": "1\. build 2\. test"/);
  });

  it("--json: id, shortId, entries with the stored envelope", () => {
    const out = cli(["show", plannerId.toUpperCase().slice(0, 16), "--json"], { cwd }).json<{
      id: string;
      shortId: string;
      entries: Array<{
        key: string;
        namespace: string;
        occurrence: number;
        bytes: number;
        entry: Entry;
      }>;
    }>();
    expect(out.id).toBe(plannerId);
    expect(out.shortId).toBe(plannerId.slice(0, 12));
    expect(out.entries).toHaveLength(1);
    expect(out.entries[0]!.entry.response).toEqual({ text: "1. build 2. test" });
    expect(out.entries[0]!.entry.manifest.task).toBe("T-1");
  });

  it("an ambiguous prefix is exit 1, listing the candidates", () => {
    const r = cli(["show", SHARED.slice(0, 8)], { cwd });
    expect(r.status).toBe(1);
    const lines = r.stderr
      .trimEnd()
      .split("\n")
      .filter((l) => !l.includes("warning: skipped"));
    const [first, ...rest] = lines;
    expect(first).toMatch(
      /^invocache: prefix abcdef01 is ambiguous: 2 ids in .* start with it; use a longer prefix/,
    );
    expect(rest).toHaveLength(2);
    expect(rest.join("\n")).toMatch(/twin-a/);
    expect(rest.join("\n")).toMatch(/twin-b/);
    const json = cli(["show", SHARED, "--json"], { cwd }).json<{
      error: { code: string; exitCode: number; candidates: string[] };
    }>();
    expect(json.error.code).toBe("ERR_ID_AMBIGUOUS");
    expect(json.error.exitCode).toBe(1);
    expect(json.error.candidates.sort()).toEqual([twinA, twinB].sort());
    // One more character makes it unique.
    expect(cli(["show", twinA.slice(0, 11)], { cwd }).status).toBe(twinA[10] === twinB[10] ? 1 : 0);
    expect(cli(["show", twinA.slice(0, 40)], { cwd }).status).toBe(0);
  });

  it("an unknown prefix is exit 1", () => {
    const r = cli(["show", "99999999"], { cwd });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /no entry in .* has an id starting with 99999999; list them with `invocache ls`/,
    );
  });
});

describe("invocache stats", () => {
  it("--json: counts, sizes, by namespace, role and model", () => {
    const out = cli(["stats", "--json"], { cwd }).json<Record<string, unknown>>();
    expect(out).toMatchObject({
      entries: 5,
      ids: 5,
      runs: 0,
      verdicts: { accepted: 0, rejected: 1, none: 4 },
      problems: 1,
    });
    expect(Object.keys(out).sort()).toEqual([
      "byModel",
      "byNamespace",
      "byRole",
      "bytes",
      "entries",
      "ids",
      "newest",
      "oldest",
      "prices",
      "problems",
      "recorded",
      "recordedMs",
      "runs",
      "source",
      "verdicts",
    ]);
    expect((out.byNamespace as Record<string, { entries: number }>).crafted?.entries).toBe(3);
    expect((out.byModel as Record<string, { entries: number }>)["gpt-5"]?.entries).toBe(2);
    expect((out.byRole as Record<string, { recordedMs: number }>).old?.recordedMs).toBe(250);
  });

  it("prints tables", () => {
    const r = cli(["stats", "--namespace", "crafted"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/entries\s+3 \(3 ids, 0 run records\)/);
    expect(r.stdout).toMatch(
      /^ {2}model\s+entries\s+size\s+recorded time\s+recorded cost\n {2}gpt-4o\s+3\s/m,
    );
  });
});

describe("invocache prune", () => {
  it("--dry-run lists what is older than the duration and changes nothing", () => {
    const r = cli(["prune", "--older-than", "30d", "--dry-run", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const out = r.json<{
      dryRun: boolean;
      removed: Array<{ key: string; id: string }>;
      kept: number;
    }>();
    expect(out.dryRun).toBe(true);
    expect(out.removed.map((x) => x.id)).toEqual([old]);
    expect(out.kept).toBe(4);
    expect(cli(["ls", "--json"], { cwd }).json<LsJson>().entries).toHaveLength(5);
  });

  it("removes them for real", () => {
    const r = cli(["prune", "--older-than", "30d"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Removed 1 entry from sqlite:\/\/.*; 4 kept\./);
    expect(
      cli(["ls", "--json"], { cwd })
        .json<LsJson>()
        .entries.map((e) => e.id),
    ).not.toContain(old);
    expect(cli(["prune", "--older-than", "30d"], { cwd }).stdout).toMatch(/Nothing to prune/);
  });
});

describe("invocache stamp and verify", () => {
  it("stamps an artifact from a stored entry; verify passes, then fails once the artifact changes", () => {
    const artifact = join(cwd, "plan.md");
    writeFileSync(artifact, "1. build 2. test\n");
    const r = cli(["stamp", "plan.md", "--id", plannerId.slice(0, 10), "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toEqual({
      artifact: "plan.md",
      stampPath: "plan.md.intoto.jsonl",
      id: plannerId,
      shortId: plannerId.slice(0, 12),
      namespace: "default",
      occurrence: 0,
      signed: false,
      keyid: null,
    });
    const statement = JSON.parse(readFileSync(`${artifact}.intoto.jsonl`, "utf8").split("\n")[0]!);
    expect(statement._type).toBe("https://in-toto.io/Statement/v1");

    const ok = cli(["verify", "plan.md", "--json"], { cwd });
    expect(ok.status, ok.stdout).toBe(0);
    const report = ok.json<{
      ok: boolean;
      artifacts: Array<{
        ok: boolean;
        stamps: Array<{ id: string; replayed: boolean; ok: boolean }>;
        problems: string[];
      }>;
    }>();
    expect(report.ok).toBe(true);
    expect(report.artifacts[0]!.stamps).toEqual([
      expect.objectContaining({ line: 1, ok: true, id: plannerId, replayed: false, problems: [] }),
    ]);

    // Flip one byte.
    const bytes = readFileSync(artifact);
    bytes[0] = bytes[0]! ^ 1;
    writeFileSync(artifact, bytes);
    const bad = cli(["verify", "plan.md"], { cwd });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^FAIL {2}plan\.md/);
    expect(bad.stdout).toMatch(/the artifact changed since it was stamped/);
  });

  it("verify: a missing stamp fails with exit 1; several artifacts are summarized", () => {
    writeFileSync(join(cwd, "lonely.txt"), "x");
    const r = cli(["verify", "lonely.txt", "plan.md"], { cwd });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/never stamped/);
    expect(r.stdout).toMatch(/2 of 2 artifacts failed verification/);
  });

  it("stamp: an unknown id is exit 1, a missing artifact exit 1 with what to do", () => {
    expect(cli(["stamp", "plan.md", "--id", "99999999"], { cwd }).status).toBe(1);
    const r = cli(["stamp", "missing.md", "--id", plannerId.slice(0, 8)], { cwd });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^invocache: cannot read artifact missing\.md to stamp it/);
  });
});
