/**
 * The outward redaction (src/secrets/outward.ts): what leaves the process
 * (warning events, process warnings, the messages of invocache's errors)
 * holds no secret, redacted as the store would be. Spans: otel.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createRecorder,
  type InvocationRequest,
  type RecorderEvents,
  type Store,
  StoreError,
} from "../../src/index.js";
import { createSecretScanner, redactOutward, redactOutwardError } from "../../src/secrets/index.js";
import { noise } from "./fakes.js";

const PROJECT_KEY = ["sk-", "proj-", noise(48, 21)].join("");
const ENV_KEY = noise(40, 22);
const req: InvocationRequest = { role: "builder", model: "gpt-5", prompt: "Build the app" };

/** A store whose driver fails with a message that quotes a key (a driver echoing its connection string). */
function leakyStore(): Store {
  const fail = async () => {
    throw new Error(`auth failed for redis://:${PROJECT_KEY}@cache.internal:6379`);
  };
  return {
    url: "redis://cache.internal:6379",
    get: fail,
    set: fail,
    delete: fail,
    // biome-ignore lint/correctness/useYield: fails before yielding anything
    async *list() {
      throw new Error("list failed");
    },
    acquireLease: fail,
    releaseLease: fail,
    close: async () => {},
  } as Store;
}

const processWarnings: string[] = [];
const onWarning = (w: Error & { detail?: string }) =>
  processWarnings.push(`${w.message}\n${w.detail ?? ""}`);
process.on("warning", onWarning);
afterEach(() => {
  processWarnings.length = 0;
});

describe("redactOutward", () => {
  it("redacts key shapes and, with the recorder's scanner, its env secrets; idempotent; prose kept", () => {
    const scanner = createSecretScanner({ env: { ACME_API_KEY: ENV_KEY } });
    const text = `Summarize the report. key=${PROJECT_KEY} acme=${ENV_KEY}`;
    const out = redactOutward(text, scanner);
    expect(out).toBe(
      "Summarize the report. key={secret:openai-api-key} acme={secret:ACME_API_KEY}",
    );
    expect(redactOutward(out, scanner)).toBe(out);
    expect(redactOutward("")).toBe("");
  });

  it("an error's name, message and stack; a thrown non-error as text", () => {
    const e = redactOutwardError(new TypeError(`bad key ${PROJECT_KEY}`));
    expect(e.name).toBe("TypeError");
    expect(e.message).toBe("bad key {secret:openai-api-key}");
    expect(e.stack).toContain("{secret:openai-api-key}");
    expect(JSON.stringify(e)).not.toContain(PROJECT_KEY);
    expect(redactOutwardError(`raw ${PROJECT_KEY}`).message).toBe("raw {secret:openai-api-key}");
  });
});

describe("what leaves the process holds no secret", () => {
  it("an InvocacheError built around a quoted key: the message is redacted, the cause is the original", () => {
    const cause = new Error(PROJECT_KEY);
    const e = new StoreError("memory://", "get", `store said: ${PROJECT_KEY}`, { cause });
    expect(e.message).toBe("store said: {secret:openai-api-key}");
    expect(e.stack).not.toContain(PROJECT_KEY);
    expect(e.cause).toBe(cause);
  });

  it("a failing store whose error quotes a key: warning events and the process warning are redacted", async () => {
    const r = createRecorder({ store: leakyStore(), mode: "auto", env: {} });
    const warnings: RecorderEvents["warning"][] = [];
    r.on("warning", (w) => warnings.push(w));
    expect(await r.call(req, async () => ({ ok: true }))).toEqual({ ok: true });
    await new Promise((res) => setImmediate(res)); // process warnings are emitted on the next tick
    expect(warnings.length).toBeGreaterThan(0);
    expect(processWarnings.length).toBeGreaterThan(0);
    const out = JSON.stringify([warnings.map((w) => w.message), processWarnings]);
    expect(out).toContain("{secret:");
    expect(out).not.toContain(PROJECT_KEY);
    await r.close();
  });
});
