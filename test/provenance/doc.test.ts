/**
 * docs/provenance.md shows a real stamp and `jq` commands with their output.
 * These tests build the example for real (record, replay, stamp after each)
 * and check that the page shows exactly that stamp, that every `jq` command
 * runs and prints what the page says, that every `openssl` command does the
 * same on the example stamped with the fixed test key, and that the Python
 * verifier's output is the one shown.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyStamp } from "../../src/provenance/index.js";
import { INVOCACHE_VERSION } from "../../src/version.js";
import { skipUnless } from "../helpers/service.js";
import { tempDir } from "../helpers/tmp.js";
import { docExample, fixedKey } from "./fixtures.js";

const DOC = fileURLToPath(new URL("../../docs/provenance.md", import.meta.url));
const doc = readFileSync(DOC, "utf8");

let dir: string;
let signedDir: string;
let artifact: string;
beforeAll(async () => {
  dir = tempDir("provenance-doc");
  artifact = await docExample(dir);
  signedDir = tempDir("provenance-doc-signed");
  await docExample(signedDir, fixedKey());
});

const firstStamp = () =>
  JSON.parse(readFileSync(`${artifact}.intoto.jsonl`, "utf8").split("\n")[0]!);

interface Block {
  lang: string;
  body: string;
}

/** The fenced code blocks of a piece of markdown, in order. */
function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1]!,
    body: m[2]!,
  }));
}

/** The text from a `## ` heading to the next one. */
function section(heading: string): string {
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/provenance.md has no section "## ${heading}"`);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

const has = (cmd: string) => spawnSync(cmd, ["--version"]).status === 0;
const hasOpenssl = spawnSync("openssl", ["version"]).status === 0;

/**
 * Run every `sh` block of a section in `cwd` (one bash each, in order, so a
 * block may use the files an earlier one wrote) and compare its stdout with
 * the `text` block after it; `otherwise` checks a block with no text after it.
 */
function runSection(heading: string, cwd: string, otherwise: (stdout: string) => void): number {
  const list = blocks(section(heading));
  let n = 0;
  for (let i = 0; i < list.length; i++) {
    const block = list[i]!;
    if (block.lang !== "sh") continue;
    n++;
    const r = spawnSync("bash", ["-eo", "pipefail", "-c", block.body], { cwd, encoding: "utf8" });
    expect(r.stderr, block.body).toBe("");
    expect(r.status, block.body).toBe(0);
    const next = list[i + 1];
    if (next?.lang === "text") expect(r.stdout, block.body).toBe(next.body);
    else otherwise(r.stdout);
  }
  return n;
}

describe("docs/provenance.md", () => {
  it("the example stamp is line 1 of the example, exactly (the version aside)", async () => {
    const m =
      /<!-- stamp-example:begin -->\n```json\n([\s\S]*?)\n```\n<!-- stamp-example:end -->/.exec(
        doc,
      );
    expect(m, "the stamp-example markers").not.toBeNull();
    const shown = JSON.parse(m![1]!);
    shown.predicate.runDetails.builder.version.invocache = INVOCACHE_VERSION;
    expect(shown).toEqual(firstStamp());
    // And the example verifies.
    const report = await verifyStamp(artifact);
    expect(report.problems).toEqual([]);
    expect(report.stamps.map((s) => s.replayed)).toEqual([false, true]);
  });

  // jq is not part of the npm install: .ci/run installs it, and under CI a
  // missing jq fails here instead of skipping.
  it.skipIf(skipUnless(has("jq"), "jq", "apt-get install -y jq"))(
    "every jq command runs in the example's directory and prints what is shown",
    () => {
      const n = runSection(
        "Reading a stamp with `jq`",
        dir,
        (stdout) => expect(JSON.parse(stdout)).toEqual(firstStamp()), // the pretty-print
      );
      expect(n).toBeGreaterThanOrEqual(6);
    },
  );

  // openssl, like jq, is installed by .ci/run; under CI a missing one fails here.
  it.skipIf(skipUnless(has("jq") && hasOpenssl, "jq and openssl", "apt-get install -y jq openssl"))(
    "every openssl command runs on the signed example and prints what is shown",
    () => {
      const n = runSection("Checking a signature with `openssl`", signedDir, (stdout) => {
        throw new Error(`an openssl block without its output shown; it printed ${stdout}`);
      });
      expect(n).toBeGreaterThanOrEqual(4);
    },
  );

  it.skipIf(skipUnless(has("python3"), "python3", "apt-get install -y python3"))(
    "the Python verifier prints what is shown",
    () => {
      const block = blocks(section("Verifying with another implementation")).at(-1)!;
      const [command, ...output] = block.body.trimEnd().split("\n");
      expect(command).toBe("python3 test/provenance/verify_stamp.py plan.md");
      const script = fileURLToPath(new URL("./verify_stamp.py", import.meta.url));
      const r = spawnSync("python3", [script, "plan.md"], { cwd: dir, encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${output.join("\n")}\n`);
    },
  );
});
