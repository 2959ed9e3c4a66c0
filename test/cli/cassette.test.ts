/**
 * The commands on YAML cassettes: ls, show, stats, prune (unused entries,
 * older-than) and redact.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cassetteStore } from "../../src/cassette/index.js";
import { createRecorder, invocationIdentity } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";
import { BUILD_TIMEOUT, buildCli, cli } from "./helpers.js";

const cwd = tempDir("cli-cassette");

const SECRET = "tok-7f3a9c2e51d84b6a0c";
const requests = [
  { role: "planner", model: "gpt-5", prompt: "Plan the app" },
  { role: "builder", model: "gpt-5", prompt: "Build the app" },
  { role: "reviewer", model: "gpt-5", prompt: "Review the app" },
];
const ids = requests.map((r) => invocationIdentity(r));

/** Record the three requests into a cassette (with no secrets known to the writer). */
async function record(file: string): Promise<void> {
  const store = cassetteStore(join(cwd, file), { env: {}, parseCache: false });
  const recorder = createRecorder({ store, mode: "auto" });
  for (const req of requests) {
    await recorder.call(req, async () => ({ text: `${req.role} says hi; token ${SECRET}` }));
  }
  await recorder.close();
  await store.close();
}

beforeAll(async () => {
  await buildCli();
  await record("a.yaml");
  await record("b.yaml");
}, BUILD_TIMEOUT);

describe("reading a cassette", () => {
  it("ls --cassette lists its entries in recording order", () => {
    const r = cli(["ls", "--cassette", "a.yaml", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const out = r.json<{ source: string; entries: Array<{ id: string; role: string }> }>();
    expect(out.source).toBe("cassette://a.yaml");
    expect(out.entries.map((e) => e.role)).toEqual(["planner", "builder", "reviewer"]);
    expect(new Set(out.entries.map((e) => e.id))).toEqual(new Set(ids));
  });

  it("show --cassette resolves a prefix; stats counts by role", () => {
    const show = cli(["show", ids[1]!.slice(0, 9), "--cassette", "a.yaml"], { cwd });
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/role\s+builder/);
    const stats = cli(["stats", "--cassette", "a.yaml", "--json"], { cwd }).json<{
      entries: number;
      byRole: Record<string, { entries: number }>;
    }>();
    expect(stats.entries).toBe(3);
    expect(stats.byRole.reviewer?.entries).toBe(1);
  });

  it("a missing cassette is a usage error (2), a malformed one exit 1, with the file named", () => {
    const missing = cli(["ls", "--cassette", "nope.yaml"], { cwd });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^invocache: --cassette nope\.yaml: no such file or folder/);
    writeFileSync(join(cwd, "bad.yaml"), "invocache: 1\nentries:\n  - id: [unclosed\n");
    const bad = cli(["ls", "--cassette", "bad.yaml"], { cwd });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/bad\.yaml/);
  });
});

describe("invocache prune --cassette", () => {
  it("--unused drops the listed entries (the vitest helper's report format), --dry-run first", () => {
    const report = `invocache: 2 recorded entries were not used by "x":\n  - default:e:${ids[0]}:0\n  - ${ids[2]!.slice(0, 12)}\n`;
    const dry = cli(["prune", "--cassette", "a.yaml", "--unused", "-", "--dry-run", "--json"], {
      cwd,
      input: report.split("\n").slice(1).join("\n"),
    });
    expect(dry.status, dry.stderr).toBe(0);
    const planned = dry.json<{ dryRun: boolean; removed: Array<{ id: string }>; kept: number }>();
    expect(planned.dryRun).toBe(true);
    expect(planned.removed.map((x) => x.id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(planned.kept).toBe(1);
    const before = readFileSync(join(cwd, "a.yaml"), "utf8");

    writeFileSync(join(cwd, "unused.txt"), report.split("\n").slice(1).join("\n"));
    const real = cli(["prune", "--cassette", "a.yaml", "--unused", "unused.txt"], { cwd });
    expect(real.status, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/Removed 2 entries from cassette:\/\/a\.yaml; 1 kept\./);
    const after = readFileSync(join(cwd, "a.yaml"), "utf8");
    expect(after).not.toBe(before);
    const left = cli(["ls", "--cassette", "a.yaml", "--json"], { cwd }).json<{
      entries: Array<{ id: string }>;
    }>();
    expect(left.entries.map((e) => e.id)).toEqual([ids[1]]);
  });

  it("--older-than on a cassette; a bad --unused line is a usage error", () => {
    const r = cli(["prune", "--cassette", "b.yaml", "--older-than", "1d"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Nothing to prune in cassette:\/\/b\.yaml \(3 entries kept\)/);
    const bad = cli(["prune", "--cassette", "b.yaml", "--unused", "-"], { cwd, input: "hello\n" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--unused line 1: "hello" is neither an entry key/);
  });
});

describe("invocache redact", () => {
  const env = { MY_SERVICE_TOKEN: SECRET };

  it("--check finds the secret, changes nothing and exits 1", () => {
    const before = readFileSync(join(cwd, "b.yaml"), "utf8");
    expect(before).toContain(SECRET);
    const r = cli(["redact", "b.yaml", "--check", "--json"], { cwd, env });
    expect(r.status).toBe(1);
    const out = r.json<{
      files: Array<{
        file: string;
        written: boolean;
        found: Array<{ name: string; key: string; path: string }>;
      }>;
    }>();
    expect(out.files).toHaveLength(1);
    expect(out.files[0]!.written).toBe(false);
    expect(out.files[0]!.found).toHaveLength(3);
    expect(out.files[0]!.found[0]).toMatchObject({
      name: "MY_SERVICE_TOKEN",
      path: "$.response.text",
    });
    expect(readFileSync(join(cwd, "b.yaml"), "utf8")).toBe(before);
  });

  it("redacts in place; the cassette is then clean", () => {
    const r = cli(["redact", "b.yaml"], { cwd, env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^redacted {2}b\.yaml: 3 secrets/);
    const after = readFileSync(join(cwd, "b.yaml"), "utf8");
    expect(after).not.toContain(SECRET);
    expect(after).toContain("{secret:MY_SERVICE_TOKEN}");
    const check = cli(["redact", "b.yaml", "--check"], { cwd, env });
    expect(check.status).toBe(0);
    expect(check.stdout).toBe("clean  b.yaml\n");
  });

  it("a missing cassette is a usage error", () => {
    const r = cli(["redact", "nope.yaml"], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/redact: no such cassette or folder nope\.yaml/);
  });
});
