/**
 * `invocache view` as a command (in process): --export writes the report
 * and --json describes it; bad flags are usage errors naming the flag.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { viewCommand } from "../../src/cli/commands/view.js";
import { fakeIo } from "../cli/in-process.js";
import { recordDemo } from "./fixtures.js";

const io = fakeIo;

describe("invocache view", () => {
  let demo: { dir: string; store: string };
  beforeAll(async () => {
    demo = await recordDemo();
  }, 60_000);

  it("--export writes one self-contained file", async () => {
    const t = io(demo.dir);
    const code = await viewCommand.run(["--store", demo.store, "--export", "r.html", "--json"], t);
    expect(code).toBe(0);
    const summary = JSON.parse(t.stdout()) as { path: string; bytes: number; sections: number };
    expect(summary.path).toBe(join(demo.dir, "r.html"));
    const text = readFileSync(summary.path, "utf8");
    expect(Buffer.byteLength(text)).toBe(summary.bytes);
    expect(text).toContain(
      'http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;',
    );
    // No external reference of any kind.
    expect(text).not.toMatch(/\b(?:src|href)="(?:https?:)?\/\//);
    expect(text).toContain('data-route="/run/demo/demo-1"');
  });

  it("refuses --store with --cassette and a bad --port", async () => {
    await expect(
      viewCommand.run(["--store", demo.store, "--cassette", "x"], io(demo.dir)),
    ).rejects.toThrow(/--store or --cassette/);
    await expect(viewCommand.run(["--port", "99999"], io(demo.dir))).rejects.toThrow(
      '--port must be an integer 0–65535, got "99999"',
    );
    // An empty value is not port 0 (any free port): Number("") is 0.
    await expect(viewCommand.run(["--port", ""], io(demo.dir))).rejects.toThrow(
      '--port must be an integer 0–65535, got ""',
    );
    await expect(viewCommand.run(["--limit", "0"], io(demo.dir))).rejects.toThrow(
      '--limit must be an integer 1–100000, got "0"',
    );
    await expect(viewCommand.run(["--max-age", "soon"], io(demo.dir))).rejects.toThrow(/--max-age/);
  });
});
