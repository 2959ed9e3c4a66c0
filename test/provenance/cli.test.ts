/**
 * `invocache keygen`, `stamp --key` and `verify --trust` end to end, as a
 * user runs them: a real SQLite store seeded by the recorder, the built
 * binary, real key files.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createRecorder, invocationIdentity } from "../../src/index.js";
import { BUILD_TIMEOUT, buildCli, cli } from "../cli/helpers.js";
import { tempDir } from "../helpers/tmp.js";

const cwd = tempDir("cli-signed");

const req = { role: "planner", model: "gpt-5", prompt: "Plan the app", task: "T-1" };
const id = invocationIdentity(req);

beforeAll(async () => {
  await buildCli();
  const recorder = createRecorder({ projectRoot: cwd, mode: "auto" });
  await recorder.call(req, async () => ({ text: "1. build 2. test" }));
  await recorder.close();
}, BUILD_TIMEOUT);

interface VerifyJson {
  ok: boolean;
  artifacts: Array<{
    ok: boolean;
    problems: string[];
    trust: string[] | null;
    stamps: Array<{
      signed: boolean;
      trustedBy: string | null;
      signatures: Array<{ keyid: string; status: string }>;
      problems: string[];
    }>;
  }>;
}

describe("keygen, stamp --key, verify --trust", () => {
  let keyid: string;

  it("keygen writes a PEM pair (private 0600) and refuses to overwrite it", () => {
    const r = cli(["keygen", "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    const out = r.json<{
      privateKey: string;
      publicKey: string;
      keyid: string;
      algorithm: string;
    }>();
    expect(out).toMatchObject({
      privateKey: join(".invocache", "keys", "invocache-signing.key.pem"),
      publicKey: join(".invocache", "keys", "invocache-signing.pub.pem"),
      algorithm: "ed25519",
    });
    expect(out.keyid).toMatch(/^[0-9a-f]{64}$/);
    keyid = out.keyid;
    expect(statSync(join(cwd, out.privateKey)).mode & 0o777).toBe(0o600);
    const before = readFileSync(join(cwd, out.privateKey), "utf8");

    const again = cli(["keygen"], { cwd });
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/invocache-signing\.key\.pem exists; a key is never overwritten/);
    expect(readFileSync(join(cwd, out.privateKey), "utf8")).toBe(before);

    const other = cli(["keygen", "--name", "other", "--algorithm", "ecdsa-p256"], { cwd });
    expect(other.status, other.stderr).toBe(0);
    expect(other.stdout).toMatch(/Key pair \(ecdsa-p256\), keyid [0-9a-f]{64}/);
    expect(cli(["keygen", "--algorithm", "rsa"], { cwd }).status).toBe(2);
  });

  it("stamp --key signs; verify --trust accepts it, and fails for an unsigned stamp or another key", () => {
    writeFileSync(join(cwd, "plan.md"), "1. build 2. test\n");
    const key = join(".invocache", "keys", "invocache-signing.key.pem");
    const pub = join(".invocache", "keys", "invocache-signing.pub.pem");
    const r = cli(["stamp", "plan.md", "--id", id.slice(0, 10), "--key", key, "--json"], { cwd });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ signed: true, keyid });
    const line = JSON.parse(
      readFileSync(join(cwd, "plan.md.intoto.jsonl"), "utf8").split("\n")[0]!,
    );
    expect(line.payloadType).toBe("application/vnd.in-toto+json");

    const ok = cli(["verify", "plan.md", "--trust", pub], { cwd });
    expect(ok.status, ok.stdout).toBe(0);
    expect(ok.stdout).toContain(`signed by ${keyid.slice(0, 12)} (trusted)`);

    const noTrust = cli(["verify", "plan.md"], { cwd });
    expect(noTrust.status).toBe(0);
    expect(noTrust.stdout).toContain("signed (signatures not checked: no --trust)");

    const wrong = cli(
      ["verify", "plan.md", "--trust", join(".invocache", "keys", "other.pub.pem"), "--json"],
      {
        cwd,
      },
    );
    expect(wrong.status).toBe(1);
    const report = wrong.json<VerifyJson>();
    expect(report.ok).toBe(false);
    expect(report.artifacts[0]!.problems).toEqual([
      expect.stringMatching(
        /^line 1: signature 1 is by keyid [0-9a-f]{16}…, which is not a trusted key/,
      ),
    ]);
    expect(report.artifacts[0]!.stamps[0]!).toMatchObject({
      signed: true,
      trustedBy: null,
      signatures: [{ keyid, status: "untrusted" }],
    });

    // An unsigned stamp appended: without trust fine, with trust a named problem.
    expect(cli(["stamp", "plan.md", "--id", id.slice(0, 10)], { cwd }).stdout).toContain(
      "(unsigned)",
    );
    const mixed = cli(["verify", "plan.md", "--trust", pub, "--json"], { cwd });
    expect(mixed.status).toBe(1);
    expect(mixed.json<VerifyJson>().artifacts[0]!.problems).toEqual([
      expect.stringMatching(/^line 2: unsigned: trust was asked for/),
    ]);
  });

  it("the payload rewritten with the artifact: verify --trust --json lists the problem", () => {
    writeFileSync(join(cwd, "forged.md"), "1. build 2. test\n");
    const key = join(".invocache", "keys", "invocache-signing.key.pem");
    expect(cli(["stamp", "forged.md", "--id", id.slice(0, 10), "--key", key], { cwd }).status).toBe(
      0,
    );
    const stampPath = join(cwd, "forged.md.intoto.jsonl");
    const env = JSON.parse(readFileSync(stampPath, "utf8"));
    const statement = JSON.parse(Buffer.from(env.payload, "base64").toString());
    writeFileSync(join(cwd, "forged.md"), "rm -rf /\n");
    statement.subject[0].digest.sha256 = "a".repeat(64);
    env.payload = Buffer.from(JSON.stringify(statement)).toString("base64");
    writeFileSync(stampPath, `${JSON.stringify(env)}\n`);
    const r = cli(
      [
        "verify",
        "forged.md",
        "--trust",
        join(".invocache", "keys", "invocache-signing.pub.pem"),
        "--json",
      ],
      {
        cwd,
      },
    );
    expect(r.status).toBe(1);
    const problems = r.json<VerifyJson>().artifacts[0]!.problems;
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^line 1: signature 1 does not verify with trusted key .*changed after signing$/,
      ),
    );
  });

  it("verify --json names each tamper: keyid swapped, signature flipped, file truncated", () => {
    const key = join(".invocache", "keys", "invocache-signing.key.pem");
    const pub = join(".invocache", "keys", "invocache-signing.pub.pem");
    const cases: Array<[string, (line: string) => string, RegExp]> = [
      [
        "keyid.md",
        (l) => {
          const e = JSON.parse(l);
          e.signatures[0].keyid = "f".repeat(64);
          return JSON.stringify(e);
        },
        /^line 1: signature 1: keyid f{16}… was edited: the signature is by trusted key/,
      ],
      [
        "sig.md",
        (l) => {
          const e = JSON.parse(l);
          const sig = Buffer.from(e.signatures[0].sig, "base64");
          sig[0] = sig[0]! ^ 1;
          e.signatures[0].sig = sig.toString("base64");
          return JSON.stringify(e);
        },
        /^line 1: signature 1 does not verify with trusted key/,
      ],
      ["cut.md", (l) => l.slice(0, 100), /^line 1: not JSON \(/],
    ];
    for (const [name, edit, reason] of cases) {
      writeFileSync(join(cwd, name), "1. build 2. test\n");
      expect(cli(["stamp", name, "--id", id.slice(0, 10), "--key", key], { cwd }).status).toBe(0);
      const stampPath = join(cwd, `${name}.intoto.jsonl`);
      writeFileSync(stampPath, `${edit(readFileSync(stampPath, "utf8").trimEnd())}\n`);
      const r = cli(["verify", name, "--trust", pub, "--json"], { cwd });
      expect(r.status, name).toBe(1);
      const report = r.json<VerifyJson>();
      expect(report.ok).toBe(false);
      expect(report.artifacts[0]!.problems[0], name).toMatch(reason);
    }
  });

  it("usage errors name the argument: verify '', stamp '', --trust '', a missing key file", () => {
    const empty = cli(["verify", ""], { cwd });
    expect(empty.status).toBe(2);
    expect(empty.stderr).toMatch(
      /^invocache: verify: <artifact> must be a file path, got an empty string/,
    );
    expect(empty.stderr).not.toMatch(/unexpected error/);
    const second = cli(["verify", "plan.md", ""], { cwd });
    expect(second.status).toBe(2);
    expect(second.stderr).toMatch(/<artifact> \(argument 2\) must be a file path/);
    expect(cli(["stamp", "", "--id", id.slice(0, 10)], { cwd }).stderr).toMatch(
      /stamp: <artifact> must be a file path, got an empty string/,
    );
    expect(cli(["verify", "plan.md", "--trust", ""], { cwd }).status).toBe(2);
    const missing = cli(["verify", "plan.md", "--trust", "nope.pem"], { cwd });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/cannot read trusted key .*nope\.pem/);
    const pubAsKey = cli(
      [
        "stamp",
        "plan.md",
        "--id",
        id.slice(0, 10),
        "--key",
        join(".invocache", "keys", "invocache-signing.pub.pem"),
      ],
      { cwd },
    );
    expect(pubAsKey.status).toBe(1);
    expect(pubAsKey.stderr).toMatch(/is a public key; signing needs the private key/);
  });
});
