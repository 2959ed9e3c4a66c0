/**
 * The setup every real-SDK suite shares: an API key that must never be
 * stored, and for each test a fresh fake provider on loopback and a fresh
 * SQLite sandbox, both closed after it.
 */
import { afterEach, beforeEach } from "vitest";
import { sqliteSandbox } from "../adapters/helpers.js";
import {
  type FakeProvider,
  type FakeProviderOptions,
  startFakeProvider,
} from "../fake-provider/index.js";

export type Sandbox = Awaited<ReturnType<typeof sqliteSandbox>>;

/** The current test's provider; `restart` swaps it for one started with `options`. */
export type SuiteProvider = FakeProvider & {
  restart(options: FakeProviderOptions): Promise<void>;
};

export interface SdkSuite {
  /** `<prefix><random>-do-not-store`: tests grep stored bytes for it. */
  readonly key: string;
  /** Always the running test's provider. */
  readonly provider: SuiteProvider;
  /** Always the running test's sandbox. */
  readonly sandbox: Sandbox;
}

/**
 * Register the per-test provider and sandbox for this file.
 *
 * @example
 * const { key: KEY, provider, sandbox } = sdkSuite("sk-live-");
 * it("records", async () => {
 *   const recorder = sandbox.recorder("auto");
 *   // … an SDK client on `${provider.url}/v1` with apiKey KEY
 * });
 */
export function sdkSuite(keyPrefix: string): SdkSuite {
  let provider: FakeProvider | undefined;
  let sandbox: Sandbox | undefined;
  beforeEach(async () => {
    provider = await startFakeProvider();
    sandbox = await sqliteSandbox();
  });
  afterEach(async () => {
    await provider?.close();
    await sandbox?.cleanup();
  });
  const restart = async (options: FakeProviderOptions) => {
    await provider?.close();
    provider = await startFakeProvider(options);
  };
  return {
    key: `${keyPrefix}${Math.random().toString(36).slice(2)}-do-not-store`,
    provider: forward(() => provider, "provider", { restart }) as SuiteProvider,
    sandbox: forward(() => sandbox, "sandbox", {}),
  };
}

/** An object that reads every property from `current()` (methods bound to it), plus `own`. */
function forward<T extends object>(current: () => T | undefined, name: string, own: object): T {
  return new Proxy(own as T, {
    get(target, prop) {
      if (Reflect.has(target, prop)) return Reflect.get(target, prop);
      const now = current();
      if (now === undefined) throw new Error(`the SDK suite's ${name} exists only inside a test`);
      const value: unknown = Reflect.get(now, prop, now);
      return typeof value === "function" ? value.bind(now) : value;
    },
  });
}
