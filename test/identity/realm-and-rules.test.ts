/**
 * Params built in another realm (a node:vm context, an iframe, a worker's
 * structured clone) are as plain as ours; rules turned off per call change
 * the manifest the way the normalization table says.
 */
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { invocationIdentity, invocationManifest } from "../../src/identity/index.js";

const base = { homeDir: "/home/u", tmpDirs: ["/tmp"] };

describe("params from another realm", () => {
  it("accepts a plain object (and nested arrays) made in a node:vm context", () => {
    const foreign = runInNewContext('({ temperature: 0.2, tools: [{ name: "a" }], o: {} })') as {
      [k: string]: unknown;
    };
    expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype);
    const req = { role: "r", prompt: "p", params: foreign };
    const local = {
      role: "r",
      prompt: "p",
      params: { temperature: 0.2, tools: [{ name: "a" }], o: {} },
    };
    expect(invocationIdentity(req, base)).toBe(invocationIdentity(local, base));
  });

  it("still refuses class instances from another realm, naming them", () => {
    const map = runInNewContext("new Map([[1, 2]])");
    expect(() => invocationManifest({ role: "r", prompt: "p", params: { m: map } }, base)).toThrow(
      /request\.params\.m is a Map/,
    );
    const point = runInNewContext("new (class Point { constructor() { this.x = 1 } })()");
    expect(() =>
      invocationManifest({ role: "r", prompt: "p", params: { p: point } }, base),
    ).toThrow(/request\.params\.p is a Point/);
  });
});

describe("disableRules in identity options", () => {
  it("keeps what a turned-off rule would template, in prompt and task", () => {
    const req = { role: "r", prompt: "at 1767225600000", task: "run-1757428401123" };
    const on = invocationManifest(req, base);
    const off = invocationManifest(req, { ...base, disableRules: ["epoch-millis"] });
    expect([on.prompt, on.task]).toEqual(["at {timestamp}", "run-{timestamp}"]);
    expect([off.prompt, off.task]).toEqual(["at 1767225600000", "run-1757428401123"]);
    expect(invocationIdentity(req, base)).not.toBe(
      invocationIdentity(req, { ...base, disableRules: ["epoch-millis"] }),
    );
  });
});

describe("disableRules through a recorder", () => {
  it("applies the recorder's setting to every call; a call's own setting wins", async () => {
    const { createRecorder } = await import("../../src/recorder/index.js");
    const recorder = createRecorder({
      store: "memory://",
      mode: "auto",
      identity: { ...base, disableRules: ["epoch-millis"] },
    });
    let calls = 0;
    const ask = (prompt: string, opts = {}) =>
      recorder.call({ role: "r", prompt }, async () => ++calls, opts);
    expect(await ask("order 1767225600000")).toBe(1);
    // Epoch millis are kept by this recorder: another number is another question.
    expect(await ask("order 1767225600001")).toBe(2);
    expect(await ask("order 1767225600000")).toBe(1);
    // Per call, the table's rule is back on: both numbers are {timestamp}.
    expect(await ask("order 1767225600000", { disableRules: [] })).toBe(3);
    expect(await ask("order 1767225600001", { disableRules: [] })).toBe(3);
    await recorder.close?.();
  });
});
