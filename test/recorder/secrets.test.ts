import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRecorder, invocationIdentity } from "../../src/index.js";
import { modelOf } from "../helpers/model-manifest.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("rec-secrets");

const KEY = "sk-proj-Zq9Xv8Wu7Ts6Rq5Po4Nm3Lk2Jh1";
const TOKEN = "t0k3n/abc+def=12345xyz";
const env = { OPENAI_API_KEY: KEY, BILLING_SERVICE_TOKEN: TOKEN };

/** Every byte SQLite wrote: the database and its WAL. */
function sqliteBytes(): string {
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f)).toString("latin1"))
    .join("\n");
}

describe("secrets never reach a store", () => {
  it("redacts prompt, params, response and verdict reasons; the caller still gets the live value", async () => {
    const store = `sqlite://${join(dir, "cache.sqlite")}`;
    const recorder = createRecorder({ store, mode: "auto", secrets: { env } });
    const req = {
      role: "builder",
      prompt: `Deploy with ${KEY} and token ${encodeURIComponent(TOKEN)}`,
      params: { headers: { authorization: `Bearer ${TOKEN}` } },
    };
    const live = await recorder.call(req, async () => ({
      echoed: `your key is ${KEY}`,
      key: KEY,
      b64: Buffer.from(TOKEN).toString("base64"),
    }));
    expect(live.echoed).toContain(KEY);
    await recorder.verdict(recorder.last!.id, "rejected", { reason: `leaked ${KEY}` });
    expect(modelOf(recorder.last!.manifest).prompt).toBe(
      "Deploy with {secret:OPENAI_API_KEY} and token {secret:BILLING_SERVICE_TOKEN:url}",
    );
    await recorder.close();

    const bytes = sqliteBytes();
    for (const needle of [
      KEY,
      TOKEN,
      encodeURIComponent(TOKEN),
      Buffer.from(TOKEN).toString("base64").slice(0, 20),
    ]) {
      expect(bytes.includes(needle), needle).toBe(false);
    }
    expect(bytes).toContain("{secret:OPENAI_API_KEY}");

    // Replay serves placeholders, or the current env's values when asked.
    const plain = createRecorder({ store, mode: "replay", secrets: { env } });
    expect((await plain.call(req, async () => ({}))) as unknown).toMatchObject({
      echoed: "your key is {secret:OPENAI_API_KEY}",
    });
    await plain.close();
    const restoring = createRecorder({
      store,
      mode: "replay",
      secrets: { env },
      restoreSecrets: true,
    });
    // Only where the recorded value was the secret itself; inside a longer string it stays a placeholder.
    expect((await restoring.call(req, async () => ({}))) as unknown).toMatchObject({
      key: KEY,
      echoed: "your key is {secret:OPENAI_API_KEY}",
    });
    await restoring.close();
  });

  it("rotating a key does not change the identity", () => {
    const req = (key: string) => ({ role: "r", prompt: `use ${key}` });
    const a = invocationIdentity(req("sk-proj-AAAAbbbbCCCCdddd1111eeee"));
    const b = invocationIdentity(req("sk-proj-ZZZZyyyyXXXXwwww9999vvvv"));
    expect(a).toBe(b);
  });
});
