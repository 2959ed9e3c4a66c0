/**
 * `invocache import` in process (runCli with a fake Io): the report, --json,
 * --dry-run writing nothing, a second import keeping what is there
 * byte for byte, bodies that cannot be decoded skipped, and usage errors.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/errors.js";
import { runCli } from "../../src/cli/run.js";
import { fakeIo } from "../cli/in-process.js";
import { tempDir } from "../helpers/tmp.js";

const VCR = join(import.meta.dirname, "../fixtures/import/vcr/dd-trace-py");
const CHAT = join(VCR, "openai-chat_completion.yaml");
const TOOLS = join(VCR, "anthropic_completion_tools.yaml");
const GET = join(VCR, "openai-model_retrieve.yaml");

let dir: string;
beforeEach(() => {
  dir = tempDir("import-cli");
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

async function run(...argv: string[]) {
  const io = fakeIo(dir);
  const code = await runCli(["import", ...argv], io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** A HAR with one chat completion (`times` times) whose answer is `body` under `encoding`. */
function har(
  body: string,
  headers: Array<{ name: string; value: string }>,
  encoding?: string,
  times = 1,
) {
  const file = join(dir, "one.har");
  writeFileSync(
    file,
    JSON.stringify({
      log: {
        version: "1.2",
        entries: Array.from({ length: times }, () => ({
          request: {
            method: "POST",
            url: "https://api.openai.com/v1/chat/completions",
            headers: [{ name: "content-type", value: "application/json" }],
            postData: {
              mimeType: "application/json",
              text: JSON.stringify({
                model: "gpt-5",
                messages: [{ role: "user", content: "hi" }],
              }),
            },
          },
          response: {
            status: 200,
            statusText: "OK",
            headers,
            content: {
              mimeType: "application/json",
              text: body,
              ...(encoding === undefined ? {} : { encoding }),
            },
          },
        })),
      },
    }),
  );
  return file;
}

const ANSWER = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  model: "gpt-5",
  choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
});

describe("invocache import", () => {
  it("imports into a new cassette and says what it did with each call (--json)", async () => {
    const cassette = join(dir, "imported.yaml");
    const r = await run(CHAT, TOOLS, GET, "--cassette", cassette, "--json");
    expect(r.code).toBe(EXIT.ok);
    const json = JSON.parse(r.out);
    expect(json.dryRun).toBe(false);
    expect(json.counts).toEqual({ imported: 2, exists: 0, skipped: 1, failed: 0 });
    expect(json.items.map((i: { outcome: string }) => i.outcome)).toEqual([
      "imported",
      "imported",
      "skipped",
    ]);
    expect(json.items[0]).toMatchObject({
      file: CHAT,
      where: "interactions[0]",
      request: "POST https://api.openai.com/v1/chat/completions",
      occurrence: 0,
      key: expect.stringMatching(/^default:e:[0-9a-f]{64}:0$/),
    });
    expect(existsSync(cassette)).toBe(true);
  });

  it("--dry-run reports the same outcomes and writes nothing", async () => {
    const cassette = join(dir, "imported.yaml");
    const r = await run(CHAT, TOOLS, GET, "--cassette", cassette, "--dry-run");
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toMatch(/would import 2, already there 0, skipped 1, failed 0/);
    expect(existsSync(cassette)).toBe(false);
  });

  it("a second import keeps every entry already there, byte for byte, and says so", async () => {
    const cassette = join(dir, "imported.yaml");
    expect((await run(CHAT, TOOLS, "--cassette", cassette)).code).toBe(EXIT.ok);
    const before = readFileSync(cassette);
    const again = await run(CHAT, TOOLS, "--cassette", cassette, "--json");
    expect(again.code).toBe(EXIT.ok);
    const json = JSON.parse(again.out);
    expect(json.counts).toEqual({ imported: 0, exists: 2, skipped: 0, failed: 0 });
    expect(json.items[0].reason).toMatch(/kept, not overwritten/);
    expect(readFileSync(cassette).equals(before)).toBe(true);
  });

  it("imports into a SQLite store", async () => {
    const store = `sqlite://${join(dir, "cache.sqlite")}`;
    const r = await run(CHAT, "--store", store);
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toMatch(/imported 1, already there 0, skipped 0, failed 0/);
    const ls = fakeIo(dir);
    expect(await runCli(["ls", "--store", store, "--json"], ls)).toBe(EXIT.ok);
    expect(ls.stdout()).toContain('"model": "gpt-3.5-turbo"');
  });

  it("decodes a gzip body kept as base64, and skips one that does not decode (never half-imported)", async () => {
    const cassette = join(dir, "imported.yaml");
    const gz = gzipSync(Buffer.from(ANSWER)).toString("base64");
    const ok = har(
      gz,
      [
        { name: "content-encoding", value: "gzip" },
        { name: "content-type", value: "application/json" },
      ],
      "base64",
    );
    expect(JSON.parse((await run(ok, "--cassette", cassette, "--json")).out).counts.imported).toBe(
      1,
    );

    const broken = Buffer.from(gzipSync(Buffer.from(ANSWER)));
    broken.fill(0, 10, 20); // a corrupt deflate stream behind a valid gzip header
    const bad = har(
      broken.toString("base64"),
      [{ name: "content-encoding", value: "gzip" }],
      "base64",
    );
    const cassette2 = join(dir, "other.yaml");
    const r = await run(bad, "--cassette", cassette2, "--json");
    const json = JSON.parse(r.out);
    expect(json.counts).toEqual({ imported: 0, exists: 0, skipped: 1, failed: 0 });
    expect(json.items[0].reason).toMatch(/response: the body is gzip-encoded and does not decode/);
    expect(existsSync(cassette2)).toBe(false);

    const zstd = har("AAAA", [{ name: "content-encoding", value: "zstd" }], "base64");
    const z = JSON.parse((await run(zstd, "--cassette", cassette2, "--json")).out);
    expect(z.items[0].reason).toMatch(/content-encoding "zstd", which import does not decode/);
  });

  it("usage errors: no destination, an unknown format, a wrong --from, a missing file", async () => {
    const no = await run(CHAT);
    expect(no.code).toBe(EXIT.usage);
    expect(no.err).toMatch(/--store URL or --cassette PATH/);

    const text = join(dir, "notes.txt");
    writeFileSync(text, "hello\n");
    const unknown = await run(text, "--cassette", join(dir, "x.yaml"));
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.err).toMatch(/cannot tell the format .* --from vcr\|har\|nock\|aimock/);

    expect((await run(CHAT, "--from", "pcap", "--cassette", join(dir, "x.yaml"))).err).toMatch(
      /--from must be one of vcr, har, nock, aimock/,
    );
    const wrong = await run(CHAT, "--from", "har", "--cassette", join(dir, "x.yaml"));
    expect(wrong.code).toBe(EXIT.usage);
    expect(wrong.err).toMatch(/is not a har recording/);

    const missing = await run(join(dir, "missing.yaml"), "--cassette", join(dir, "x.yaml"));
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.err).toMatch(/cannot read/);
  });

  it("a request asked twice in one file is occurrence 0, then 1", async () => {
    const twice = har(ANSWER, [{ name: "content-type", value: "application/json" }], undefined, 2);
    const json = JSON.parse(
      (await run(twice, "--cassette", join(dir, "imported.yaml"), "--json")).out,
    );
    expect(json.counts.imported).toBe(2);
    expect(json.items.map((i: { occurrence: number }) => i.occurrence)).toEqual([0, 1]);
    expect(json.items[0].id).toBe(json.items[1].id);
  });
});
