/**
 * @opentelemetry/api is an optional peer: importing invocache, creating a
 * recorder, calling with `telemetry: false`, or calling while nothing is
 * registered with OpenTelemetry never loads it; a recorder given a
 * provider loads it on its first call (the control).
 */
import { describe, expect, it, vi } from "vitest";

const loaded = vi.hoisted(() => new Set<string>());
vi.mock("@opentelemetry/api", async (importOriginal) => {
  loaded.add("@opentelemetry/api");
  return importOriginal();
});

describe("OpenTelemetry is imported lazily", () => {
  it("importing invocache and calling with telemetry: false loads nothing of it", async () => {
    const { createRecorder } = await import("../../src/index.js");
    await import("../../src/adapters/index.js");
    const on = createRecorder({ store: "memory://", env: {} }); // telemetry on, no call yet
    const off = createRecorder({ store: "memory://", env: {}, telemetry: false });
    await off.call({ role: "x", prompt: "p" }, async () => ({ ok: true }));
    await off.call({ role: "x", prompt: "p" }, async () => ({ ok: true }));
    expect([...loaded]).toStrictEqual([]);
    await on.close();
    await off.close();
  });

  it("telemetry on with nothing registered: calls load nothing either (unregistered.test.ts: an SDK registered later is seen)", async () => {
    const { createRecorder } = await import("../../src/index.js");
    const r = createRecorder({ store: "memory://", env: {} });
    await r.call({ role: "x", prompt: "p" }, async () => ({ ok: true }));
    await r.call({ role: "x", prompt: "p" }, async () => ({ ok: true }));
    expect([...loaded]).toStrictEqual([]);
    await r.close();
  });

  it("a recorder given a tracer provider loads it on its first call (the control)", async () => {
    const { createRecorder } = await import("../../src/index.js");
    const span = {
      isRecording: () => false,
      setAttribute: () => span,
      setAttributes: () => span,
      setStatus: () => span,
      recordException: () => {},
      updateName: () => span,
      end: () => {},
    };
    // The structural provider the option accepts (TracerProviderLike); no SDK, so the spy sees the API load alone.
    const tracerProvider = { getTracer: () => ({ startSpan: () => span }) };
    const r = createRecorder({ store: "memory://", env: {}, telemetry: { tracerProvider } });
    await r.call({ role: "x", prompt: "p" }, async () => ({ ok: true }));
    expect([...loaded]).toStrictEqual(["@opentelemetry/api"]);
    await r.close();
  });
});
