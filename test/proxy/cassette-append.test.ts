/**
 * The proxy records into a cassette by appending (src/cassette/append.ts):
 * while it runs, each acknowledged recording is an appended record that a
 * replaying reader already sees; when it stops, the file is rewritten once
 * in the normal form, byte for byte what the rewriting writer makes. The
 * same for a folder of cassettes (one file per `x-invocache-cassette`).
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cassetteStore, emitCassette, readCassette } from "../../src/cassette/index.js";
import { createProxy } from "../../src/proxy/index.js";
import { type FakeProvider, startFakeProvider } from "../fake-provider/index.js";

const MARK = "--- # invocache-append ";
let provider: FakeProvider;
const dir = mkdtempSync(join(tmpdir(), "invocache-proxy-append-"));

beforeAll(async () => {
  provider = await startFakeProvider();
});
afterAll(async () => {
  await provider.close();
});

function chat(base: string, i: number, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x", ...headers },
    body: JSON.stringify({ model: "gpt-fake", messages: [{ role: "user", content: `call ${i}` }] }),
  });
}

describe("the proxy's cassettes append while it records", () => {
  it("one cassette file: records appended while running, the normal form after close", async () => {
    const path = join(dir, "one.yaml");
    const proxy = await createProxy({
      store: path,
      mode: "auto",
      env: {},
      upstreams: { openai: provider.url },
    });
    try {
      for (let i = 0; i < 4; i++) expect((await chat(proxy.url, i)).status).toBe(200);
      const running = readFileSync(path, "utf8");
      expect(running.split(MARK).length - 1).toBe(3); // the first write makes the file
      const reader = cassetteStore(path, { parseCache: false, onWarning: (m) => expect.fail(m) });
      let entries = 0;
      for await (const _ of reader.list("")) entries++;
      await reader.close();
      expect(entries).toBe(4);
    } finally {
      await proxy.close();
    }
    const closed = readFileSync(path, "utf8");
    expect(closed).not.toContain(MARK);
    expect(closed).toBe(emitCassette(await readCassette(path)));
    // And it replays with the upstream left alone.
    const calls = provider.calls;
    const replay = await createProxy({
      store: path,
      mode: "replay",
      env: {},
      upstreams: { openai: provider.url },
    });
    try {
      for (let i = 0; i < 4; i++) expect((await chat(replay.url, i)).status).toBe(200);
    } finally {
      await replay.close();
    }
    expect(provider.calls).toBe(calls);
    expect(readFileSync(path, "utf8")).toBe(closed);
  });

  it("a folder of cassettes: each file appended to, each rewritten at close", async () => {
    const folder = join(dir, "folder");
    mkdirSync(folder);
    const proxy = await createProxy({
      store: folder,
      mode: "auto",
      env: {},
      upstreams: { openai: provider.url },
    });
    try {
      for (let i = 0; i < 3; i++) {
        for (const name of ["a.yaml", "b.yaml"]) {
          const res = await chat(proxy.url, i, { "x-invocache-cassette": name });
          expect(res.status).toBe(200);
        }
      }
      expect(readFileSync(join(folder, "a.yaml"), "utf8")).toContain(MARK);
    } finally {
      await proxy.close();
    }
    for (const name of ["a.yaml", "b.yaml"]) {
      const text = readFileSync(join(folder, name), "utf8");
      expect(text).not.toContain(MARK);
      expect(await readCassette(join(folder, name))).toHaveLength(3);
    }
  });
});
