/**
 * Default-deny: secrets planted in prompts, params and responses never reach
 * a cassette's bytes, in any spelling; they come back on replay only when
 * asked, from the environment. Redaction happens once, in the recorder; a
 * secret that still reaches the cassette is refused and nothing is written;
 * `redactCassette` scrubs a file that already leaked.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cassetteStore, emitCassette, redactCassette } from "../../src/cassette/index.js";
import { SecretLeakError } from "../../src/errors.js";
import { createRecorder } from "../../src/index.js";
import { MACHINE, makeEntry, tempDir } from "../cassette/helpers.js";
import { FAKE_KEYS, noise } from "./fakes.js";

const dir = tempDir("secrets-leak");
const KEY = `live-${noise(32, 51)}+/=`;
const TOKEN = noise(28, 52);
const env = { ACME_API_KEY: KEY, GH_TOKEN: TOKEN };
const shaped = FAKE_KEYS.find(([n]) => n === "openai-api-key")![1];

/** Every spelling of `secret` that must not appear in the file. */
function spellings(secret: string): string[] {
  const out = [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
  for (const prefix of ["", "x", "xy"]) {
    const b64 = Buffer.from(prefix + secret).toString("base64");
    out.push(b64.slice(Math.ceil((prefix.length * 4) / 3) + 1, -4)); // a core that any encoding contains
    out.push(
      Buffer.from(prefix + secret)
        .toString("base64url")
        .slice(3, -3),
    );
  }
  return out;
}

function plantedResponse() {
  return {
    text: `Your key is ${KEY}; the shaped one is ${shaped}.`,
    headers: {
      authorization: `Basic ${Buffer.from(`user:${KEY}`).toString("base64")}`,
      "x-echo": `Bearer ${TOKEN}`,
    },
    url: `https://api.example.com/v1?key=${encodeURIComponent(KEY)}`,
    body: JSON.stringify({ key: KEY, token: TOKEN }),
    [`field-${TOKEN}`]: "secret in a key",
    apiKey: KEY,
  };
}

describe("secrets never reach the disk", () => {
  it("planted in the prompt, params and response: redacted in every spelling", async () => {
    const path = join(dir, "redacted.yaml");
    const store = cassetteStore(path, { env, parseCache: false });
    // The recorder redacts too (manifest and response, with the same env); the
    // store's scan is the last line of defense and must agree with it.
    const recorder = createRecorder({ store, mode: "auto", identity: MACHINE, secrets: { env } });
    const request = {
      role: "builder",
      model: "gpt-5",
      prompt: `Call the API with ${KEY} and ${Buffer.from(KEY).toString("base64")} and ${shaped}`,
      params: { headers: { authorization: `Bearer ${TOKEN}` } },
    };
    const live = await recorder.call(request, async () => plantedResponse());
    expect(live).toStrictEqual(plantedResponse()); // the caller gets the real thing
    await recorder.close();
    await store.close();

    const bytes = readFileSync(path);
    for (const secret of [KEY, TOKEN, shaped]) {
      for (const s of spellings(secret)) {
        expect(bytes.includes(Buffer.from(s)), `${s.slice(0, 12)}… is in the file`).toBe(false);
      }
    }
    const text = bytes.toString("utf8");
    expect(text).toContain("{secret:ACME_API_KEY}");
    expect(text).toContain("{secret:GH_TOKEN}");
    expect(text).toContain("{secret:openai-api-key}");
    expect(text).toMatch(/\{secret:ACME_API_KEY:b64-[012]\}/);
    expect(text).toContain("{secret:ACME_API_KEY:url}");

    // Replay serves the placeholders by default...
    const replayStore = cassetteStore(path, { env, parseCache: false });
    const replayer = createRecorder({
      store: replayStore,
      mode: "replay",
      identity: MACHINE,
      secrets: { env },
    });
    const replayed = (await replayer.call(request, async () => ({}))) as ReturnType<
      typeof plantedResponse
    >;
    expect(replayed.text).toBe(
      "Your key is {secret:ACME_API_KEY}; the shaped one is {secret:openai-api-key}.",
    );
    await replayStore.close();

    // ...and the real value, byte for byte, when asked, where the recorded value WAS the secret
    // (a placeholder inside a longer string stays: a recording must not build a URL around a key;
    // shapes stay too: their value was never known).
    const restoring = cassetteStore(path, { env, restoreSecrets: true, parseCache: false });
    const r2 = createRecorder({
      store: restoring,
      mode: "replay",
      identity: MACHINE,
      secrets: { env },
    });
    const restored = (await r2.call(request, async () => ({}))) as Record<string, unknown>;
    expect(restored).toStrictEqual({ ...replayed, apiKey: KEY });
    expect(replayed.apiKey).toBe("{secret:ACME_API_KEY}");
    await restoring.close();
  });

  it("redaction happens once, in the recorder: its rules decide the placeholders, the cassette rewrites nothing", async () => {
    // The recorder knows ACME_API_KEY; the cassette's check is given no env at all.
    const path = join(dir, "once.yaml");
    const store = cassetteStore(path, { env: {}, parseCache: false });
    const recorder = createRecorder({ store, mode: "record", identity: MACHINE, secrets: { env } });
    await recorder.call({ role: "r", model: "m", prompt: "once" }, async () => ({
      text: `k ${KEY}`,
    }));
    await recorder.close();
    await store.close();
    const text = readFileSync(path, "utf8");
    expect(text).toContain("k {secret:ACME_API_KEY}");
    expect(text).not.toContain(KEY);

    // A recorder that redacts nothing: the cassette does not redact in its place, it refuses.
    const second = join(dir, "once-refused.yaml");
    const strict = cassetteStore(second, { env, parseCache: false });
    const lax = createRecorder({
      store: strict,
      mode: "record",
      identity: MACHINE,
      secrets: { env: {}, patterns: [] },
    });
    const error = await lax
      .call({ role: "r", model: "m", prompt: "once" }, async () => ({ text: `k ${KEY}` }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretLeakError);
    expect((error as SecretLeakError).findings).toStrictEqual([
      { name: "ACME_API_KEY", path: "$.response.text" },
    ]);
    await strict.close();
    expect(existsSync(second)).toBe(false);
  });

  it("the store alone (a recorder with secrets: false, or any other writer) refuses: nothing reaches the file", async () => {
    const path = join(dir, "store-only.yaml");
    const store = cassetteStore(path, { env, parseCache: false });
    const recorder = createRecorder({ store, mode: "auto", identity: MACHINE, secrets: false });
    const warnings: unknown[] = [];
    recorder.on("warning", (w) => warnings.push(w.error));
    const live = await recorder.call(
      { role: "r", model: "m", prompt: "no secret here" },
      async () => plantedResponse(),
    );
    expect(live).toStrictEqual(plantedResponse()); // auto mode: the caller still gets its answer
    expect(warnings.some((e) => e instanceof SecretLeakError)).toBe(true); // and is told
    await recorder.close();
    await store.close();
    expect(existsSync(path)).toBe(false);
  });

  for (const secrets of [undefined, "refuse", "redact"] as const) {
    it(`a secret handed straight to the cassette is refused (secrets: ${String(secrets)}), naming names and paths, never values`, async () => {
      const path = join(dir, `refused-${String(secrets)}.yaml`);
      const store = cassetteStore(path, {
        env,
        parseCache: false,
        ...(secrets === undefined ? {} : { secrets }),
      });
      const { key, entry } = makeEntry(`use ${KEY}`, { ok: true });
      const error = await store.set(key, entry as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretLeakError);
      const leak = error as SecretLeakError;
      expect(leak.findings).toStrictEqual([{ name: "ACME_API_KEY", path: "$.manifest.prompt" }]);
      expect(leak.message).not.toContain(KEY);
      expect(leak.message).toMatch(/Write through a recorder/);
      expect(await store.get(key)).toBeUndefined(); // refused before it was staged
      await store.close();
      expect(existsSync(path)).toBe(false);
    });
  }

  it("a secret already in the file: the next write is refused and the file left alone; redactCassette scrubs it", async () => {
    const leaked = join(dir, "leaked.yaml");
    const a = makeEntry("prompt a", { text: `key ${KEY}` });
    const b = makeEntry("prompt b", { text: "clean" });
    const text = emitCassette([a, b].map(({ key, entry }) => ({ key, value: entry as never })));
    writeFileSync(leaked, text);

    const dry = await redactCassette(leaked, { env, dryRun: true });
    expect(dry).toStrictEqual({
      found: [
        { name: "ACME_API_KEY", path: "$.response.text", kind: "env", form: "raw", key: a.key },
      ],
      written: false,
    });
    expect(readFileSync(leaked, "utf8")).toBe(text);
    expect((await redactCassette(leaked, { env })).written).toBe(true);
    expect(readFileSync(leaked, "utf8")).not.toContain(KEY);
    expect(readFileSync(leaked, "utf8")).toContain("key {secret:ACME_API_KEY}");
    expect((await redactCassette(leaked, { env })).written).toBe(false);

    const other = join(dir, "leaked-2.yaml");
    writeFileSync(other, text);
    const store = cassetteStore(other, { env, parseCache: false });
    const refused = await store.set("default:run:r", { v: 1 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SecretLeakError);
    expect((refused as SecretLeakError).message).toContain(a.key);
    expect((refused as SecretLeakError).message).toMatch(/invocache redact/);
    await store.close();
    expect(readFileSync(other, "utf8")).toBe(text);
  });
});
