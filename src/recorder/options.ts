/**
 * `createRecorder`'s options, checked and resolved once: the mode, the store
 * (opened here when given as a URL), the namespace, limits, staleness, and
 * the two secret scanners (one for identities, one for stored entries).
 * Options left unset take the store's replay defaults (`store.policy`, e.g.
 * a cassette's `maxAge` or `env`): the policy runs here, whatever the store.
 */
import { IDENTITY_SECRETS } from "../normalize/internal.js";
import { type CallTelemetry, createTelemetry } from "../observability/index.js";
import { createSecretScanner, type SecretScanner } from "../secrets/index.js";
import type { Store } from "../store/index.js";
import { defaultStoreUrl, entryKey, openStore } from "../store/index.js";
import { type ResolvedModes, resolveKindModes } from "./kind-modes.js";
import type { Mode } from "./mode.js";
import { resolveStaleness, type Staleness } from "./staleness.js";
import type { RecorderIdentityDefaults, RecorderOptions } from "./types.js";

const DEFAULT_MAX_ENTRY = 8 * 1024 * 1024;
const DEFAULT_LEASE_MS = 30_000;

/** Options resolved: what a recorder runs with. */
export interface Settings {
  /** The mode of model calls (`modes.model`). */
  mode: Mode;
  /** The mode of each kind of invocation. */
  modes: ResolvedModes;
  namespace: string;
  identity: Readonly<RecorderIdentityDefaults>;
  store: Store;
  /** The recorder opened the store, so it closes it. */
  ownsStore: boolean;
  maxEntryBytes: number;
  leaseMs: number;
  ttl: number | undefined;
  secrets: SecretScanner | undefined;
  /** Spans and counters per call; undefined with `telemetry: false`. */
  telemetry: CallTelemetry | undefined;
  /** `maxAge`/`onStale` resolved; undefined without a `maxAge`. */
  staleness: Staleness | undefined;
  /** The options as given, with the store's defaults filled in where unset. */
  opts: RecorderOptions;
}

export function resolveOptions(given: RecorderOptions): Settings {
  if (given === null || typeof given !== "object")
    throw new TypeError("createRecorder: options must be an object");
  const { store, ownsStore } = storeOf(given);
  const opts = withStoreDefaults(given, store);
  const modes = resolveKindModes(opts.mode, opts.env);
  const mode = modes.model;
  const secrets = opts.secrets === false ? undefined : createSecretScanner(opts.secrets ?? {});
  // The manifest uses only key-material-looking env values (so identities
  // do not depend on the machine); responses are scrubbed of every secret.
  const identitySecrets =
    opts.secrets === false ? false : createSecretScanner({ ...IDENTITY_SECRETS, ...opts.secrets });
  const identity = Object.freeze({ secrets: identitySecrets, ...opts.identity });
  const namespace = opts.namespace ?? "default";
  entryKey(namespace, "0".repeat(64), 0); // validates the namespace now, not on first call
  const maxEntryBytes = positive(opts.maxEntryBytes, DEFAULT_MAX_ENTRY, "maxEntryBytes");
  const leaseMs = positive(opts.leaseMs, DEFAULT_LEASE_MS, "leaseMs");
  if (opts.ttl !== undefined) positive(opts.ttl, 0, "ttl");
  const telemetry = createTelemetry(opts.telemetry, secrets);
  const staleness = resolveStaleness(opts, store.policy);
  return {
    mode,
    modes,
    namespace,
    identity,
    store,
    ownsStore,
    maxEntryBytes,
    leaseMs,
    ttl: opts.ttl,
    secrets,
    telemetry,
    staleness,
    opts,
  };
}

/** `opts` with the store's replay defaults (`store.policy`) where `opts` leaves them unset. */
function withStoreDefaults(opts: RecorderOptions, store: Store): RecorderOptions {
  const policy = store.policy;
  if (policy === undefined) return opts;
  return {
    ...opts,
    ...(opts.secrets === undefined && policy.secrets !== undefined
      ? { secrets: policy.secrets }
      : {}),
    ...(opts.restoreSecrets === undefined && policy.restoreSecrets !== undefined
      ? { restoreSecrets: policy.restoreSecrets }
      : {}),
  };
}

function storeOf(opts: RecorderOptions): { store: Store; ownsStore: boolean } {
  if (typeof opts.store === "object" && opts.store !== null) {
    return { store: opts.store, ownsStore: false };
  }
  if (opts.store !== undefined && typeof opts.store !== "string") {
    throw new TypeError(
      "store must be a Store or a store URL such as sqlite://.invocache/cache.sqlite",
    );
  }
  const url = opts.store ?? defaultStoreUrl(opts.projectRoot ?? process.cwd());
  return { store: openStore(url), ownsStore: true };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(
      `${name} must be a positive number of ${name === "maxEntryBytes" ? "bytes" : "milliseconds"}`,
    );
  }
  return value;
}
