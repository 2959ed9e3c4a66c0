/**
 * Without @opentelemetry/api installed (its import fails, as when the
 * optional peer is absent), a recorder with telemetry on works the same and
 * makes no span.
 */
import { describe, expect, it, vi } from "vitest";

vi.mock("@opentelemetry/api", () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

describe("OpenTelemetry absent", () => {
  it("calls are recorded and replayed, counted, with no error", async () => {
    const { createRecorder } = await import("../../src/index.js");
    const r = createRecorder({ store: "memory://", env: {} });
    const warnings: string[] = [];
    r.on("warning", (w) => warnings.push(w.message));
    const req = { role: "x", prompt: "p" };
    expect(await r.call(req, async () => ({ n: 1 }))).toStrictEqual({ n: 1 });
    expect(await r.call(req, async () => ({ n: 2 }))).toStrictEqual({ n: 1 });
    expect(r.stats).toMatchObject({ calls: 2, hits: 1, misses: 1, upstreamCalls: 1 });
    expect(warnings).toStrictEqual([]);
    await r.close();
  });
});
