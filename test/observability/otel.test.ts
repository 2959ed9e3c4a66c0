/**
 * OpenTelemetry with the real SDK: an in-memory span exporter and an
 * in-memory metric reader. Span names and attributes (the contract of
 * docs/observability.md), nesting under the caller's active span, hit vs
 * miss, errors, verdicts and divergences; counters for hits, misses,
 * upstream calls and saved tokens.
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRecorder } from "../../src/index.js";
import { noise } from "../secrets/fakes.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(spans)],
});
let reader: TestReader;
let meterProvider: MeterProvider;
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(() => {
  spans.reset();
  reader = new TestReader({
    aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE,
  });
  meterProvider = new MeterProvider({ readers: [reader] });
});

const completion = (input: number, output: number) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: 4 },
  },
});

function recorder(mode: "auto" | "verify" = "auto", store = "memory://") {
  return createRecorder({
    store,
    mode,
    env: {},
    namespace: "otel",
    telemetry: { tracerProvider, meterProvider },
  });
}

async function counters(): Promise<Record<string, number>> {
  const { resourceMetrics } = await reader.collect();
  const out: Record<string, number> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) {
      for (const p of m.dataPoints) {
        const type = (p.attributes as Record<string, unknown>)["gen_ai.token.type"];
        const name = type === undefined ? m.descriptor.name : `${m.descriptor.name}.${type}`;
        out[name] = (out[name] ?? 0) + (p.value as number);
      }
    }
  }
  return out;
}

describe("OpenTelemetry spans", () => {
  it("one CLIENT span per call, a child of the caller's span; the hit says it was replayed", async () => {
    const r = recorder();
    const req = { role: "planner", model: "gpt-4o-mini", prompt: "plan" };
    const tracer = tracerProvider.getTracer("app");
    await tracer.startActiveSpan("pipeline", async (parent) => {
      await r.call(req, async () => completion(120, 30), { attempt: 0 });
      await r.call(req, async () => completion(999, 999), { attempt: 0 });
      parent.end();
    });
    const finished = spans.getFinishedSpans();
    const parent = finished.find((s) => s.name === "pipeline")!;
    const calls = finished.filter((s) => s.name !== "pipeline");
    expect(calls.map((s) => s.name)).toStrictEqual(["chat gpt-4o-mini", "chat gpt-4o-mini"]);
    for (const s of calls) {
      expect(s.kind).toBe(SpanKind.CLIENT);
      expect(s.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(s.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(s.instrumentationScope.name).toBe("invocache");
    }
    const [miss, hit] = calls.map((s) => s.attributes);
    const id = r.last!.id;
    expect(miss).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
      "gen_ai.provider.name": "openai",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
      "gen_ai.usage.cache_read.input_tokens": 4,
      "invocache.hit": false,
      "invocache.replayed": false,
      "invocache.outcome": "recorded",
      "invocache.upstream": true,
      "invocache.mode": "auto",
      "invocache.store": "memory://",
      "invocache.namespace": "otel",
      "invocache.role": "planner",
      "invocache.identity": id,
      "invocache.short_id": id.slice(0, 12),
      "invocache.attempt": 0,
      "invocache.occurrence": 0,
    });
    expect(miss?.["invocache.cost_usd"]).toBeGreaterThan(0);
    expect(miss?.["invocache.price_snapshot"]).toMatch(
      /^@pydantic\/genai-prices@[\d.]+ \d{4}-\d{2}-\d{2}$/,
    );
    // The hit reports the recording's usage (what it saved), not the fn it never called.
    expect(hit).toMatchObject({
      "invocache.hit": true,
      "invocache.replayed": true,
      "invocache.shared": false,
      "invocache.outcome": "hit",
      "invocache.upstream": false,
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
    });
    expect(hit?.["invocache.saved_ms"]).toBeGreaterThanOrEqual(0);
    await r.close();
  });

  it("runs, recorded verdicts and verify-mode divergences are attributes", async () => {
    const store = `sqlite://${(await import("node:os")).tmpdir()}/invocache-otel-${process.pid}-${Date.now()}.sqlite`;
    const a = recorder("auto", store);
    const req = { role: "builder", model: "gpt-4o-mini", prompt: "build" };
    await a.run(
      async () => {
        await a.call(req, async () => completion(10, 2));
        await a.verdict(a.last!.id, "rejected", { reason: "no tests" });
      },
      { runId: "r1" },
    );
    await a.run(async () => a.call(req, async () => completion(10, 2)), { runId: "r1" });
    await a.close();
    const v = recorder("verify", store);
    await v.run(async () => v.call(req, async () => completion(11, 2)), { runId: "r1" });
    await v.close();
    const [, replayed, verified] = spans.getFinishedSpans().map((s) => s.attributes);
    expect(replayed).toMatchObject({ "invocache.run_id": "r1", "invocache.verdict": "rejected" });
    expect(verified).toMatchObject({
      "invocache.mode": "verify",
      "invocache.divergence": "response",
      "invocache.outcome": "live",
    });
  });

  it("a failed call ends its span with an error status", async () => {
    const r = recorder();
    await expect(
      r.call({ role: "x", model: "gpt-4o-mini", prompt: "p" }, async () => {
        throw new TypeError("upstream down");
      }),
    ).rejects.toThrow("upstream down");
    const [span] = spans.getFinishedSpans();
    expect(span?.status).toStrictEqual({ code: SpanStatusCode.ERROR, message: "upstream down" });
    expect(span?.attributes["error.type"]).toBe("TypeError");
    expect(span?.attributes["invocache.outcome"]).toBe("error");
    expect(span?.events.map((e) => e.name)).toContain("exception");
    await r.close();
  });

  it("telemetry: false makes no span", async () => {
    const r = createRecorder({ store: "memory://", env: {}, telemetry: false });
    await r.call({ role: "x", prompt: "p" }, async () => completion(1, 1));
    expect(spans.getFinishedSpans()).toHaveLength(0);
    await r.close();
  });

  it("the global tracer provider is used by default", async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    try {
      const r = createRecorder({ store: "memory://", env: {} });
      await r.call({ role: "x", model: "m", prompt: "p" }, async () => completion(1, 1));
      expect(exporter.getFinishedSpans().map((s) => s.name)).toStrictEqual(["chat m"]);
      await r.close();
    } finally {
      trace.disable();
    }
  });
});

describe("OpenTelemetry registered after the first call", () => {
  it("a recorder that started with the no-op tracer makes spans once an SDK is registered", async () => {
    // The first call loads the API with no SDK: the no-op path builds nothing.
    // Registering later must still be seen (the check is per call, not cached).
    const r = createRecorder({ store: "memory://", env: {} });
    await r.call({ role: "x", model: "m", prompt: "before" }, async () => completion(1, 1));
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    try {
      await r.call({ role: "x", model: "m", prompt: "after" }, async () => completion(1, 1));
      await r.call({ role: "x", model: "m", prompt: "after" }, async () => completion(1, 1));
      const names = exporter.getFinishedSpans().map((s) => s.name);
      expect(names).toStrictEqual(["chat m", "chat m"]);
      expect(exporter.getFinishedSpans()[1]!.attributes["invocache.replayed"]).toBe(true);
    } finally {
      trace.disable();
      await r.close();
    }
  });
});

describe("OpenTelemetry metrics", () => {
  it("counts hits (single-flight followers included), misses, upstream calls and saved tokens", async () => {
    const r = recorder();
    const req = { role: "planner", model: "gpt-4o-mini", prompt: "plan" };
    await Promise.all(
      Array.from({ length: 5 }, () =>
        r.call(req, async () => {
          await new Promise((res) => setTimeout(res, 10));
          return completion(100, 20);
        }),
      ),
    );
    await r.call(req, async () => completion(100, 20));
    expect(await counters()).toStrictEqual({
      "invocache.hits": 5,
      "invocache.misses": 1,
      "invocache.upstream_calls": 1,
      "invocache.saved_tokens.input": 500,
      "invocache.saved_tokens.output": 100,
    });
    const shared = spans
      .getFinishedSpans()
      .filter((s) => s.attributes["invocache.shared"] === true);
    expect(shared).toHaveLength(4);
    for (const s of shared) expect(s.attributes["invocache.replayed"]).toBe(false);
    await r.close();
  });
});

describe("OpenTelemetry error spans carry no secret", () => {
  const PROJECT_KEY = ["sk-", "proj-", noise(48, 11)].join("");
  const ENV_KEY = noise(40, 12);

  it("an upstream error holding an sk-proj key and an env secret: status, attributes and the exception event hold neither", async () => {
    const r = createRecorder({
      store: "memory://",
      mode: "auto",
      env: {},
      secrets: { env: { ACME_API_KEY: ENV_KEY } },
      namespace: "otel",
      telemetry: { tracerProvider, meterProvider },
    });
    const prompt = "Summarize the quarterly report";
    const upstream = new Error(
      `401 Incorrect API key provided: ${PROJECT_KEY} (acme key ${ENV_KEY}) for prompt "${prompt}"`,
    );
    await expect(
      r.call({ role: "x", model: "gpt-4o-mini", prompt }, async () => {
        throw upstream;
      }),
    ).rejects.toBe(upstream); // the caller still gets its own error as it was
    const [span] = spans.getFinishedSpans();
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    const exported = JSON.stringify({
      attributes: span?.attributes,
      events: span?.events,
      status: span?.status,
      name: span?.name,
    });
    expect(exported).not.toContain(PROJECT_KEY);
    expect(exported).not.toContain(ENV_KEY);
    // The control: the message and stack are there, redacted, not dropped.
    const exception = span?.events.find((e) => e.name === "exception")?.attributes ?? {};
    expect(String(exception["exception.message"])).toContain("{secret:openai-api-key}");
    expect(String(exception["exception.message"])).toContain("{secret:ACME_API_KEY}");
    expect(String(exception["exception.message"])).toContain(prompt); // prompts may be exported
    expect(String(exception["exception.stacktrace"])).toContain("{secret:openai-api-key}");
    expect(exception["exception.type"]).toBe("Error");
    expect(span?.status.message).toContain("{secret:openai-api-key}");
    await r.close();
  });
});

describe("OpenTelemetry attributes and metric labels carry no secret", () => {
  it("a key pasted into the role and the model: the span's name, attributes and the counters' labels are redacted", async () => {
    const KEY = ["sk-", "proj-", noise(48, 13)].join("");
    const r = recorder();
    await r.call({ role: `reviewer ${KEY}`, model: `gpt-4o-mini ${KEY}`, prompt: "p" }, async () =>
      completion(10, 2),
    );
    const [span] = spans.getFinishedSpans();
    const exported = JSON.stringify({ name: span?.name, attributes: span?.attributes });
    expect(exported).toContain("reviewer {secret:openai-api-key}"); // the control: the role is there
    expect(exported).not.toContain(KEY);
    const { resourceMetrics } = await reader.collect();
    const labels = JSON.stringify(
      resourceMetrics.scopeMetrics.flatMap((m) =>
        m.metrics.flatMap((x) => x.dataPoints.map((p) => p.attributes)),
      ),
    );
    expect(labels).toContain("{secret:openai-api-key}");
    expect(labels).not.toContain(KEY);
    await r.close();
  });
});
