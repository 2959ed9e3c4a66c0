/**
 * `invocache proxy`: a record/replay HTTP endpoint in front of model APIs,
 * for any language and any SDK (docs/proxy.md). Prints one line with its
 * address when ready, serves until SIGINT/SIGTERM, then drains and exits 0.
 */
import { createProxy, ProxyError, parseUpstreamFlag } from "../../proxy/index.js";
import { SourceError } from "../../source/index.js";
import { defaultStoreUrl } from "../../store/index.js";
import { integerOption, parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";

const OPTIONS = {
  store: { type: "string" },
  mode: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  upstream: { type: "string", multiple: true },
  token: { type: "string" },
  "replay-speed": { type: "string" },
  namespace: { type: "string" },
} as const;

/**
 * @example
 * // invocache proxy --store sqlite://.invocache/cache.sqlite --port 8787
 */
export const proxyCommand: Command = {
  name: "proxy",
  help: `Usage: invocache proxy [--store URL|FILE|DIR] [--mode MODE] [--port N] [--host H]
                       [--upstream NAME=URL]... [--token T] [--replay-speed X]

Serve a record/replay endpoint any SDK points its base URL at: a call to
http://127.0.0.1:PORT/<upstream>/<path> goes to <upstream URL>/<path> through
invocache, with the same identity createFetch gives it in Node. Built-in
upstreams: openai, anthropic, gemini. Context headers (x-invocache-role, -task,
-attempt, -run, -cassette, -mode) are read and never forwarded. When ready it
prints one line with its address; Ctrl-C (or SIGTERM) stops accepting, lets
in-flight calls finish, writes pending recordings and exits 0. See docs/proxy.md.

Options:
  --store URL        a store URL, a cassette file (.yaml) or a folder of cassettes
                     (default: sqlite://.invocache/cache.sqlite under the working directory)
  --mode MODE        auto, replay, record, passthrough or verify (default: INVOCACHE_MODE,
                     else replay under CI, else auto)
  --port N           port to listen on; 0 picks a free one (default 0)
  --host H           address to bind (default 127.0.0.1; any other needs --token)
  --upstream NAME=URL  add or override an upstream (repeatable), e.g. local=http://127.0.0.1:11434
  --token T          clients must send x-invocache-token: T (required off loopback)
  --replay-speed X   replay streams with recorded timing scaled: 0 as fast as possible
                     (default), 1 as recorded, 2 twice as fast
  --namespace NAME   store namespace (default: default)
  --json             print the ready line as {"url", "mode", "store"}
  -h, --help         this help

Examples:
  invocache proxy --port 8787
  invocache proxy --store cassettes --mode replay
  invocache proxy --store postgres://ci@db/invocache --host 0.0.0.0 --token "$TOKEN"
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("proxy", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const port = values.port === undefined ? 0 : integerOption("port", values.port, 0, 65_535);
    let replaySpeed: number | undefined;
    if (values["replay-speed"] !== undefined) {
      replaySpeed = Number(values["replay-speed"]);
      if (values["replay-speed"].trim() === "" || !Number.isFinite(replaySpeed) || replaySpeed < 0)
        throw new UsageError(
          `--replay-speed: expected a number >= 0 (0 as fast as possible, 1 as recorded), got ${JSON.stringify(values["replay-speed"])}`,
        );
    }
    const upstreams: Record<string, string> = {};
    for (const flag of values.upstream ?? []) {
      const [name, url] = await usage(() => parseUpstreamFlag(flag));
      upstreams[name] = url;
    }
    // Signals are ours before the ready line: a script that reads the line
    // and sends SIGTERM at once must get a clean drain, never the default kill.
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
      signals++;
      if (signals === 1) stop();
      else io.err(`invocache proxy: ${name} again; still finishing in-flight calls\n`);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      const proxy = await usage(() =>
        createProxy({
          store: values.store ?? defaultStoreUrl(io.cwd),
          ...(values.mode === undefined ? {} : { mode: values.mode as never }),
          port,
          ...(values.host === undefined ? {} : { host: values.host }),
          upstreams,
          ...(values.token === undefined ? {} : { token: values.token }),
          ...(replaySpeed === undefined ? {} : { replaySpeed }),
          ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
          cwd: io.cwd,
          env: io.env as Record<string, string | undefined>,
          log: (line) => io.err(`${line}\n`),
        }),
      );
      if (values.json) printJson(io, { url: proxy.url, mode: proxy.mode, store: proxy.store });
      else
        io.out(
          `invocache proxy listening on ${proxy.url} (mode ${proxy.mode}, store ${proxy.store})\n`,
        );
      await stopped;
      io.err("invocache proxy: stopping; finishing in-flight calls\n");
      await proxy.close();
      return EXIT.ok;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      // A signal arriving while main exits must not kill with 130/143.
      process.on("SIGINT", () => {});
      process.on("SIGTERM", () => {});
    }
  },
};

/** Bad flags are usage errors (exit 2); a store that fails to open stays exit 1. */
async function usage<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ProxyError && error.code !== "ERR_PROXY_LISTEN") {
      throw new UsageError(`--${flagOf(error.field)}: ${error.message}`);
    }
    if (error instanceof SourceError && error.problem !== "unreadable") {
      throw new UsageError(error.message.startsWith("--") ? error.message : `--${error.message}`);
    }
    throw error;
  }
}

function flagOf(field: string): string {
  return field === "replaySpeed" ? "replay-speed" : field;
}
