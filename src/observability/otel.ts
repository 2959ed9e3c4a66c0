/**
 * OpenTelemetry for recorder calls: one span per call (GenAI semantic
 * conventions where they apply, `invocache.*` attributes for what they
 * lack) and counters for hits, misses, upstream calls and saved tokens.
 * The attribute names are a contract: docs/observability.md.
 *
 * `@opentelemetry/api` is an optional peer. It is imported lazily, the first
 * time a recorder with telemetry on makes a call while something is
 * registered with it (an SDK, a context manager) or a provider was given;
 * when it is not installed, or nothing is registered yet, nothing is loaded
 * and every call skips this module's work. Without an SDK registered the
 * API is a no-op, so "on by default" costs a property read per call.
 */

import type { SecretScanner } from "../secrets/index.js";
import { redactOutward, redactOutwardError } from "../secrets/index.js";
import type { CallSummary } from "../usage/index.js";
import { INVOCACHE_VERSION } from "../version.js";

/** Structural slices of the OpenTelemetry API used here (no type import: the peer may be absent). */
interface OtelSpan {
  isRecording(): boolean;
  setAttribute(key: string, value: string | number | boolean): unknown;
  setAttributes(attrs: Record<string, string | number | boolean>): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(error: unknown): unknown;
  updateName(name: string): unknown;
  end(): void;
}
interface OtelTracer {
  startSpan(name: string, options?: unknown, context?: unknown): OtelSpan;
}
interface OtelCounter {
  add(value: number, attributes?: Record<string, string | number | boolean>): void;
}
interface OtelMeter {
  createCounter(name: string, options?: { description?: string; unit?: string }): OtelCounter;
}
/** A `TracerProvider` of `@opentelemetry/api` (or the SDK). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}
/** A `MeterProvider` of `@opentelemetry/api` (or the SDK). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): unknown;
}
interface OtelApi {
  trace: TracerProviderLike & { getTracerProvider(): { getDelegate?(): unknown } };
  metrics: MeterProviderLike;
  createNoopMeter(): OtelMeter;
  ProxyTracerProvider: new () => { getDelegate(): unknown };
  context: { active(): unknown };
  SpanKind: { CLIENT: number };
  SpanStatusCode: { ERROR: number };
}

/** Options of the recorder's `telemetry` option. */
export interface TelemetryOptions {
  /** Default: the global tracer provider of `@opentelemetry/api`. */
  tracerProvider?: TracerProviderLike;
  /** Default: the global meter provider of `@opentelemetry/api`. */
  meterProvider?: MeterProviderLike;
}

/** Instrumentation scope name of spans and metrics. */
export const INSTRUMENTATION_NAME = "invocache";

let apiPromise: Promise<OtelApi | undefined> | undefined;

/**
 * Where `@opentelemetry/api` 1.x keeps what is registered globally (tracer
 * and meter providers, context manager, propagator, diag logger): the API
 * creates it on the first registration, from whichever copy of the API the
 * SDK loaded. While it is absent every API call is a no-op, so there is
 * nothing to load the API for (44 CommonJS files, ~30 ms of a cold start).
 */
const OTEL_GLOBAL = Symbol.for("opentelemetry.js.api.1");

/** Has any copy of the OpenTelemetry API registered anything yet? */
function otelRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] !== undefined;
}

/** `@opentelemetry/api`, or undefined when it is not installed. Imported once. */
function loadApi(): Promise<OtelApi | undefined> {
  // A variable specifier: bundlers and type checks leave the optional peer alone.
  const specifier = "@opentelemetry/api";
  apiPromise ??= import(specifier).then(
    (m: OtelApi & { default?: OtelApi }) => (m.trace === undefined ? m.default : m),
    () => undefined,
  );
  return apiPromise;
}

/** What is known when a call starts. */
export interface CallStart {
  id: string;
  occurrence: number;
  attempt: number;
  role: string;
  model: string;
  namespace: string;
  mode: string;
  store: string;
  runId?: string | undefined;
}

/** What the recorder adds when the call ends, beyond its {@link CallSummary}. */
export interface CallEnd {
  /** The verdict recorded with the entry a hit replayed. */
  verdict?: string | undefined;
  /** Kind of divergence this call showed (verify mode: `response`). */
  divergence?: string | undefined;
  /** Why the call bypassed the cache, when it did. */
  bypass?: string | undefined;
  error?: unknown;
}

/** A span in progress. */
export interface CallSpan {
  end(summary: CallSummary, end: CallEnd): void;
}

const PROVIDERS: Record<string, string> = {
  "openai.chat": "openai",
  "openai.responses": "openai",
  "anthropic.messages": "anthropic",
  "gemini.generateContent": "gcp.gemini",
};

/**
 * Telemetry of one recorder. `ready` is false until the API import settled;
 * the recorder awaits `load()` on its first call, then `start` is synchronous.
 * With no providers given and nothing registered, the import waits: `ready`
 * turns false again the first time a registration appears (checked per
 * call: one property read), and that call loads the API.
 */
export class CallTelemetry {
  #settled = false;
  /** Settled without the API because nothing was registered: load it once something is. */
  #waiting = false;
  #loading: Promise<void> | undefined;
  readonly #options: TelemetryOptions;
  #api: OtelApi | undefined;
  #tracer: OtelTracer | undefined;
  #counters:
    | { hits: OtelCounter; misses: OtelCounter; upstream: OtelCounter; saved: OtelCounter }
    | undefined;
  /** The counters are the API's no-op ones (no meter provider was registered when loaded). */
  #countersNoop = false;
  /** The API's no-op tracer provider, when spans go through the global (proxy) provider. */
  #noopDelegate: unknown;

  /** The recorder's secret scanner, for what a span exports (undefined: the built-in one). */
  readonly #scanner: SecretScanner | undefined;

  /** Role, model and run id strings as exported (redacted), memoized: a pipeline uses few. */
  readonly #exported = new Map<string, string>();

  constructor(options: TelemetryOptions, scanner?: SecretScanner) {
    this.#options = options;
    this.#scanner = scanner;
  }

  /**
   * A caller's string (role, model, run id, namespace) as a span or a metric
   * label may carry it: redacted like the store, in case a key was pasted
   * into one. Memoized (bounded), so the scan runs once per distinct string.
   */
  readonly #text = (s: string): string => {
    let out = this.#exported.get(s);
    if (out === undefined) {
      out = redactOutward(s, this.#scanner);
      if (this.#exported.size >= 512) this.#exported.clear();
      this.#exported.set(s, out);
    }
    return out;
  };

  get ready(): boolean {
    return this.#settled && !(this.#waiting && otelRegistered());
  }

  /** Import the API (first call of the first recorder only) and make the tracer and counters. */
  load(): Promise<void> {
    const options = this.#options;
    if (this.#waiting && otelRegistered()) {
      this.#waiting = false;
      this.#settled = false;
      this.#loading = undefined;
    }
    if (
      this.#loading === undefined &&
      options.tracerProvider === undefined &&
      options.meterProvider === undefined &&
      !otelRegistered()
    ) {
      // Settled a turn later, as an import would be: calls made meanwhile all
      // wait for it and resume in the order they came (the first call of a
      // burst stays the single-flight leader).
      this.#waiting = true;
      this.#loading = Promise.resolve().then(() => {
        this.#settled = true;
      });
    }
    this.#loading ??= loadApi().then((api) => {
      this.#api = api;
      if (api !== undefined) {
        const tp = options.tracerProvider ?? api.trace;
        const mp = options.meterProvider ?? api.metrics;
        this.#tracer = tp.getTracer(INSTRUMENTATION_NAME, INVOCACHE_VERSION) as OtelTracer;
        const meter = mp.getMeter(INSTRUMENTATION_NAME, INVOCACHE_VERSION) as OtelMeter;
        this.#counters = {
          hits: meter.createCounter("invocache.hits", {
            description: "Calls served without going upstream (replayed or shared)",
            unit: "{call}",
          }),
          misses: meter.createCounter("invocache.misses", {
            description: "Calls looked up and not found",
            unit: "{call}",
          }),
          upstream: meter.createCounter("invocache.upstream_calls", {
            description: "Calls that reached the model",
            unit: "{call}",
          }),
          saved: meter.createCounter("invocache.saved_tokens", {
            description: "Tokens hits did not spend again",
            unit: "{token}",
          }),
        };
        // The metrics API has no proxy: a meter taken from the no-op provider
        // stays a no-op, so its counters need no labels built, ever.
        this.#countersNoop =
          typeof api.createNoopMeter === "function" &&
          this.#counters.hits === api.createNoopMeter().createCounter("invocache.hits");
        if (options.tracerProvider === undefined && typeof api.ProxyTracerProvider === "function")
          this.#noopDelegate = new api.ProxyTracerProvider().getDelegate();
      }
      this.#settled = true;
    });
    return this.#loading;
  }

  /**
   * Whether a call would produce anything: false when the API is absent, or
   * when both the global tracer provider and the meter are the API's no-op
   * ones. Checked per call (an SDK may be registered later), before the
   * recorder builds the call's {@link CallStart}: off costs no allocation.
   */
  get active(): boolean {
    if (this.#api === undefined) return false;
    return !this.#countersNoop || !this.#tracerNoop();
  }

  /** The global tracer provider still delegates to the API's no-op provider (no SDK registered). */
  #tracerNoop(): boolean {
    if (this.#noopDelegate === undefined) return false;
    const provider = this.#api?.trace.getTracerProvider();
    return provider?.getDelegate?.() === this.#noopDelegate;
  }

  /** Start the span of a call, a child of the caller's active span. Undefined when OpenTelemetry is absent. */
  start(call: CallStart): CallSpan | undefined {
    const api = this.#api;
    const tracer = this.#tracer;
    if (api === undefined || tracer === undefined) return undefined;
    const counters = this.#counters!;
    const countersNoop = this.#countersNoop;
    const scanner = this.#scanner;
    const text = this.#text;
    if (this.#tracerNoop()) {
      // No SDK: a span would be a no-op object; only the counters may count.
      if (countersNoop) return undefined;
      return { end: (summary) => count(counters, summary, text) };
    }
    const role = text(call.role);
    const model = text(call.model);
    const op = role.startsWith("fn:") ? undefined : "chat";
    const attributes: Record<string, string | number | boolean> = {
      ...(op === undefined ? {} : { "gen_ai.operation.name": op }),
      ...(model === "" ? {} : { "gen_ai.request.model": model }),
      "invocache.role": role,
      "invocache.mode": call.mode,
      "invocache.store": call.store,
      "invocache.namespace": text(call.namespace),
      "invocache.identity": call.id,
      "invocache.short_id": call.id.slice(0, 12),
      "invocache.attempt": call.attempt,
      "invocache.occurrence": call.occurrence,
      ...(call.runId === undefined ? {} : { "invocache.run_id": text(call.runId) }),
    };
    const name = op === undefined ? `invocache ${role}` : `${op}${model ? ` ${model}` : ""}`;
    const span = tracer.startSpan(
      name,
      { kind: api.SpanKind.CLIENT, attributes },
      api.context.active(),
    );
    return {
      end(summary, end) {
        if (!countersNoop) count(counters, summary, text);
        // Sampled out: nobody will see the attributes, so none are built.
        if (!span.isRecording()) {
          span.end();
          return;
        }
        const hit = summary.outcome === "hit";
        const attrs: Record<string, string | number | boolean> = {
          "invocache.hit": hit,
          "invocache.replayed": hit && !summary.shared,
          "invocache.shared": summary.shared,
          "invocache.outcome": summary.outcome,
          "invocache.upstream": summary.upstream,
          "invocache.model_ms": summary.modelMs,
        };
        if (hit) attrs["invocache.saved_ms"] = summary.modelMs;
        const u = summary.usage;
        if (u !== undefined) {
          const provider = PROVIDERS[u.shape] ?? providerOfModel(summary.model);
          if (provider !== undefined) attrs["gen_ai.provider.name"] = provider;
          if (u.model !== undefined) attrs["gen_ai.response.model"] = text(u.model);
          attrs["gen_ai.usage.input_tokens"] = u.inputTokens;
          attrs["gen_ai.usage.output_tokens"] = u.outputTokens;
          if (u.cacheReadTokens) attrs["gen_ai.usage.cache_read.input_tokens"] = u.cacheReadTokens;
          if (u.cacheWriteTokens)
            attrs["gen_ai.usage.cache_creation.input_tokens"] = u.cacheWriteTokens;
          if (u.reasoningTokens) attrs["invocache.usage.reasoning_tokens"] = u.reasoningTokens;
          attrs["invocache.usage.shape"] = u.shape;
        }
        if (summary.cost !== undefined) {
          attrs["invocache.cost_usd"] = summary.cost.usd;
          attrs["invocache.price_snapshot"] =
            `${summary.cost.snapshot.source}@${summary.cost.snapshot.version} ${summary.cost.snapshot.date}`;
        }
        if (end.verdict !== undefined) attrs["invocache.verdict"] = end.verdict;
        if (end.divergence !== undefined) attrs["invocache.divergence"] = end.divergence;
        if (end.bypass !== undefined) attrs["invocache.bypass"] = end.bypass;
        span.setAttributes(attrs);
        if (summary.outcome === "error") {
          // An upstream error often quotes the key it was given ("Incorrect
          // API key provided: sk-proj-…"): what is exported is redacted like
          // the store, never the raw message and stack (issue 29 §6).
          const e = redactOutwardError(end.error, scanner);
          attrs["error.type"] = e.name;
          span.setAttribute("error.type", e.name);
          span.recordException(e);
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: e.message });
        }
        span.end();
      },
    };
  }
}

type Counters = {
  hits: OtelCounter;
  misses: OtelCounter;
  upstream: OtelCounter;
  saved: OtelCounter;
};

/** Add one call to the counters. */
function count(counters: Counters, summary: CallSummary, text: (s: string) => string): void {
  const labels = {
    "invocache.role": text(summary.role),
    "gen_ai.request.model": text(summary.model),
    "invocache.namespace": text(summary.namespace),
  };
  const u = summary.usage;
  if (summary.outcome === "hit") {
    counters.hits.add(1, labels);
    if (u !== undefined) {
      counters.saved.add(u.inputTokens, { ...labels, "gen_ai.token.type": "input" });
      counters.saved.add(u.outputTokens, { ...labels, "gen_ai.token.type": "output" });
    }
  }
  if (summary.missed) counters.misses.add(1, labels);
  if (summary.upstream) counters.upstream.add(1, labels);
}

/** `anthropic:claude-…` / `openai.chat:gpt-4o` (AI SDK model ids) → the provider part. */
function providerOfModel(model: string): string | undefined {
  const colon = model.indexOf(":");
  return colon > 0 ? model.slice(0, colon).split(".")[0] : undefined;
}

/** The recorder's telemetry for its `telemetry` option: undefined when off. */
export function createTelemetry(
  option: boolean | TelemetryOptions | undefined,
  scanner?: SecretScanner,
): CallTelemetry | undefined {
  if (option === false) return undefined;
  if (option !== undefined && option !== true && (option === null || typeof option !== "object")) {
    throw new TypeError(
      "telemetry must be true, false or { tracerProvider?, meterProvider? } (OpenTelemetry providers)",
    );
  }
  return new CallTelemetry(option === true || option === undefined ? {} : option, scanner);
}
