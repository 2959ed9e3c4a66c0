/**
 * `cassetteStore`'s options: their types, their checks, and which of them
 * are replay policy the recorder applies (`policy`, see src/store/policy.ts)
 * rather than anything the cassette does itself.
 */
import { resolve } from "node:path";
import type { SecretOptions } from "../secrets/index.js";
import type { StorePolicy } from "../store/index.js";
import { checkOnStale, type OnStale, parseMaxAge } from "../store/internal.js";

/** Options of {@link cassetteStore}. */
export interface CassetteOptions {
  /**
   * What the cassette does with a secret in a value handed to it: it never
   * writes it. Redaction happens once, in the recorder, before the write
   * (`RecorderOptions.secrets`, on by default); the cassette only refuses
   * (`SecretLeakError`, nothing written) what still holds a secret, a last
   * line of defense. `"refuse"` and `"redact"` (the default, kept for
   * compatibility: a recorder redacts, the cassette refuses the rest) both
   * mean exactly that.
   */
  secrets?: "redact" | "refuse";
  /** Default of the recorder's `restoreSecrets` (put env secret values back into placeholders on a hit). */
  restoreSecrets?: boolean;
  /**
   * Environment of the secret check, and of the recorder's redaction unless
   * it has its own `secrets`. Default `process.env`, read at each write.
   */
  env?: Record<string, string | undefined>;
  /** Which env names hold secrets, extra allowed names, key shapes (see `SecretOptions`), for the check and the recorder's default. */
  secretOptions?: Omit<SecretOptions, "env">;
  /**
   * Default of the recorder's `maxAge`: entries recorded longer ago than
   * this are stale (ms, or `"30d"`, `"12h"`…). The recorder applies it
   * (docs/recorder.md, "Staleness"); the cassette uses it only to list stale
   * entries in `usage()`. Default: never.
   */
  maxAge?: number | string;
  /** Default of the recorder's `onStale`: `"warn"` (default), `"error"`, `"rerecord"`. */
  onStale?: OnStale;
  /** Where warnings go (lock trouble, and the recorder's staleness warnings). Default `process.emitWarning`. */
  onWarning?: (message: string) => void;
  /** `"eager"` (default): each write is on disk when it resolves. `"on-close"`: at `flush()`/`close()`. */
  write?: "eager" | "on-close";
  /**
   * Directory of the parsed-form cache (fast loads of big unchanged
   * cassettes), or false for none. Default `.invocache/cassette-cache` under
   * the working directory.
   */
  parseCache?: string | false;
  /** How long a write waits for another process's lock. Default 15 s. */
  lockTimeoutMs?: number;
  /** A writer's lock not refreshed for this long is taken over (the writer died). Default 5 s, minimum 2 s. */
  lockStaleMs?: number;
  /**
   * The biggest cassette file this store reads or writes, in bytes. Default
   * {@link MAX_CASSETTE_BYTES} (64 MiB). A cassette is loaded whole into
   * memory (parsing takes a multiple of its size), so a bigger one is
   * refused with a `CassetteError` rather than risking an out-of-memory
   * abort: split it into several cassettes, or use a SQLite store.
   */
  maxFileBytes?: number;
}

/** Default {@link CassetteOptions.maxFileBytes}: 64 MiB. */
export const MAX_CASSETTE_BYTES = 64 * 1024 * 1024;

/** Options checked and resolved: what a cassette handle runs with. */
export interface CassetteSettings {
  eager: boolean;
  /**
   * Append acknowledged writes to the file instead of rewriting it, until
   * close (append.ts). Not a user option: set by `recordingCassetteStore`
   * (internal.ts), which the proxy records with.
   */
  append: boolean;
  maxFileBytes: number;
  cacheDir: string | false;
  /** `maxAge` in ms, for `usage().stale` only. */
  maxAgeMs: number | undefined;
  /** Options of the last-line secret check. */
  scan: SecretOptions;
  lockTimeoutMs: number | undefined;
  lockStaleMs: number | undefined;
  onWarning: ((message: string) => void) | undefined;
  policy: StorePolicy | undefined;
}

/**
 * Check `opts` and resolve the defaults.
 *
 * @throws TypeError/RangeError naming the option and the values it takes.
 */
export function resolveCassetteOptions(opts: CassetteOptions): CassetteSettings {
  if (opts.secrets !== undefined && opts.secrets !== "redact" && opts.secrets !== "refuse") {
    throw new TypeError(
      `secrets must be "redact" or "refuse", got ${JSON.stringify(opts.secrets)}`,
    );
  }
  checkOnStale(opts.onStale);
  if (opts.write !== undefined && opts.write !== "eager" && opts.write !== "on-close") {
    throw new TypeError(`write must be "eager" or "on-close", got ${JSON.stringify(opts.write)}`);
  }
  if (
    opts.maxFileBytes !== undefined &&
    !(Number.isSafeInteger(opts.maxFileBytes) && opts.maxFileBytes > 0)
  ) {
    throw new RangeError(
      `maxFileBytes must be a positive integer (bytes), got ${String(opts.maxFileBytes)}`,
    );
  }
  const scan: SecretOptions = {
    ...opts.secretOptions,
    ...(opts.env === undefined ? {} : { env: opts.env }),
  };
  return {
    eager: (opts.write ?? "eager") === "eager",
    append: false,
    maxFileBytes: opts.maxFileBytes ?? MAX_CASSETTE_BYTES,
    cacheDir:
      opts.parseCache === false
        ? false
        : resolve(opts.parseCache ?? resolve(process.cwd(), ".invocache", "cassette-cache")),
    maxAgeMs: opts.maxAge === undefined ? undefined : parseMaxAge(opts.maxAge),
    scan,
    lockTimeoutMs: opts.lockTimeoutMs,
    lockStaleMs: opts.lockStaleMs,
    onWarning: opts.onWarning,
    policy: policyOf(opts, scan),
  };
}

/** The options that are the recorder's to apply (see src/store/policy.ts); undefined when none is set. */
function policyOf(opts: CassetteOptions, scan: SecretOptions): StorePolicy | undefined {
  const policy: StorePolicy = {
    ...(opts.maxAge === undefined ? {} : { maxAge: opts.maxAge }),
    ...(opts.onStale === undefined ? {} : { onStale: opts.onStale }),
    ...(opts.onWarning === undefined ? {} : { onWarning: opts.onWarning }),
    ...(opts.restoreSecrets === undefined ? {} : { restoreSecrets: opts.restoreSecrets }),
    // The recorder redacts with the rules the cassette checks with.
    ...(opts.env === undefined && opts.secretOptions === undefined ? {} : { secrets: scan }),
  };
  return Object.keys(policy).length === 0 ? undefined : Object.freeze(policy);
}
