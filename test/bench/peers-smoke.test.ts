/**
 * `npm run bench:peers -- --quick` end to end, in a child process: 100 calls
 * recorded and replayed by each tool (invocache over a cassette, SQLite,
 * Redis and Postgres, nock.back, Polly.js), the leak check and the
 * miss/repeat probes. Only that it runs and prints the table is checked here;
 * timings are not (the quick run is one round on a shared machine). It
 * writes nothing to docs/ (quick mode never does).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BEGIN, END, namesDifferingField, withPeersSection } from "../../bench/peers/report.js";
import { postgresAvailable } from "../helpers/postgres-server.js";
import { redisServerBinary } from "../helpers/redis-server.js";
import { type NodeRun, runNode } from "../helpers/run-node.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function runQuick(): Promise<NodeRun> {
  // Explicit modes in the bench must win over whatever the environment says.
  return runNode(["--import", "tsx", "bench/peers/run.ts", "--quick"], root, {
    ...process.env,
    INVOCACHE_MODE: "passthrough",
  });
}

describe("bench:peers --quick", () => {
  // About 25 s of CPU (fifteen short-lived Node processes, a redis-server
  // and a Postgres cluster); wall time roughly doubles when the two cores
  // are shared with other jobs.
  it("records and replays with every tool and prints the table", {
    timeout: 300_000,
  }, async () => {
    const { code, stdout, stderr } = await runQuick();
    expect(code, `exit code; stderr:\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/^\| tool +\| record, × direct +\| replay, calls\/s/m);
    for (const label of [
      "invocache + cassette",
      "invocache + SQLite",
      // The shared stores run when their servers can start here (CI installs both).
      ...(redisServerBinary === undefined ? [] : ["invocache + Redis"]),
      ...(postgresAvailable ? ["invocache + Postgres"] : []),
      "nock.back 14",
      "Polly.js 6",
    ]) {
      expect(stdout).toContain(`| ${label} `);
    }
    expect(stdout).toContain("≥ 1.5× best peer");
    // The lead must show by CPU per call too, and recording must cost no more than the best peer's (issue 32).
    expect(stdout).toMatch(
      /(PASS|MISS) +replay CPU per call: invocache \+ cassette ≤ 1\/1\.5 of best peer/,
    );
    expect(stdout).toMatch(/(PASS|MISS) +recording overhead: invocache \+ SQLite ≤ best peer/);
    // The SDK floor's ratio is printed (on stderr), its former 0.7× target retired (issue 32).
    expect(stderr).toMatch(/invocache-sqlite +\d+ calls\/s +\d+\.\d\d× the floor\n/);
    expect(stdout).not.toContain("× the SDK floor");
    expect(stdout).toContain("only invocache's miss message names the differing field");
    expect(stderr).not.toContain("FAILED");
  });
});

describe("docs/performance.md: the Peers section", () => {
  const others = "# Performance\n\nintro\n\n## Cassettes\n\ntheirs\n";

  it("is appended when missing, other sections untouched", () => {
    const doc = withPeersSection(others, "TABLE");
    expect(doc.startsWith(others)).toBe(true);
    expect(doc).toContain(`## Peers\n\n${BEGIN}\n\nTABLE\n\n${END}\n`);
  });

  it("fills an empty heading, keeps the sections after it and text written by hand", () => {
    const doc = `${others}\n## Peers\n\nhand-written analysis\n\n## Later\n\nx\n`;
    const once = withPeersSection(doc, "TABLE 1");
    expect(once).toContain("## Cassettes\n\ntheirs\n");
    expect(once).toContain(`${END}\n\nhand-written analysis\n\n## Later\n\nx\n`);
    const twice = withPeersSection(once, "TABLE 2");
    expect(twice).toBe(once.replace("TABLE 1", "TABLE 2"));
  });
});

describe("what counts as naming the differing field", () => {
  it("needs the field with its recorded and its requested value, not an echo of the request", () => {
    expect(namesDifferingField("    - params.temperature: 0.2 → 0.7")).toBe(true);
    expect(namesDifferingField('{"temperature":0.7,"note":"v0.2 of the prompt"}')).toBe(false);
    expect(namesDifferingField('"body": "{\\"temperature\\":0.7}" … 0.2')).toBe(false);
  });
});
