/**
 * `invocache demo`: the whole job in one command, on the embedded default.
 * A planner → builder → reviewer pipeline runs against a simulated model,
 * is recorded, runs again and replays; its artifacts are stamped and the
 * stamps verified. Needs no network and no key.
 */
import { access, rm } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { makeDirectory } from "../../files/index.js";
import { shortId } from "../../identity/index.js";
import {
  readSigningKey,
  readTrustedKey,
  type SigningKey,
  type TrustedKey,
  writeKeyPair,
} from "../../provenance/index.js";
import { createRecorder, type Mode } from "../../recorder/index.js";
import { shellQuote } from "../../shell/index.js";
import type { Store } from "../../store/index.js";
import { defaultStoreUrl, entryPrefix, openStore, parseStoreUrl } from "../../store/index.js";
import { formatSpend, PRICE_SNAPSHOT, type Spend } from "../../usage/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { startSimulatedModel } from "../demo/model-server.js";
import { ALL_ARTIFACTS, DEMO_MODEL, runPipeline, type StepResult } from "../demo/pipeline.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { formatMs, oneLine, plural, renderTable } from "../format.js";
import type { Style } from "../io.js";
import { verifyAll, verifyRow } from "./verify.js";

const OPTIONS = {
  store: { type: "string" },
  namespace: { type: "string" },
  out: { type: "string" },
} as const;

/** Each run has its own id, so each has its own stored run record (the viewer shows both). */
const runIdOf = (n: number): string => `demo-${n}`;

/** One run of the demo pipeline, as `demo --json` reports it. */
export interface DemoRun {
  run: number;
  /** Its run id: its record is stored as `<namespace>:run:<runId>`. */
  runId: string;
  mode: Mode;
  upstreamCalls: number;
  hits: number;
  misses: number;
  /** Wall time of the whole run, ms. */
  ms: number;
  /** Recorded call time the hits did not spend, ms (recorder.stats.savedMs). */
  savedMs: number;
  /** Tokens and dollars the run's upstream calls cost (recorder.stats.spent). */
  spent: Spend;
  /** Tokens and dollars the run's hits did not spend again (recorder.stats.saved). */
  saved: Spend;
  /** The run's content hash: a Merkle root over the identities it called, in order. */
  contentHash: string;
  steps: StepResult[];
}

/**
 * @example
 * // invocache demo
 */
export const demoCommand: Command = {
  name: "demo",
  help: `Usage: invocache demo [--store URL] [--namespace NS] [--out DIR] [--json]

The whole job in one command. A planner → builder → reviewer pipeline (the
reviewer rejects the first build; attempt 1 is accepted) runs against a
simulated OpenAI-compatible model on a loopback port (150–400 ms a call),
through createFetch and plain fetch:

  run 1, mode auto     misses, calls the model, records into the store
  run 2, mode replay   only hits, zero calls to the model
  then                 every artifact is stamped after each run, signed with the demo's
                       own key (generated once in <out>/keys), and the stamps verified
                       against that key

The namespace is cleared first, so run 1 records even when an earlier demo
filled the store. Modes are passed explicitly, so CI=true changes nothing.
Exits 0 when the story holds (run 2 all hits, no upstream call, stamps verify).

Options:
  --store URL       where to record (default: sqlite://.invocache/cache.sqlite under the
                    working directory)
  --namespace NS    the namespace to clear and record into (default: demo)
  --out DIR         where artifacts, stamps and the demo's signing key (DIR/keys) go
                    (default: .invocache/demo)
  --json            {"ok", "store", "namespace", "cleared", "model", "outDir", "runs": [{"run",
                    "runId", "mode", "upstreamCalls", "hits", "misses", "ms", "savedMs", "spent",
                    "saved", "contentHash", "steps": [{"step", "role", "kind", "artifact", "id",
                    "attempt", "occurrence", "hit", "ms", "verdict", "reason"}]}], "key": {"keyid",
                    "privateKey", "publicKey", "generated"}, "stamps": [verify rows], "savedMs",
                    "saved": {"inputTokens", "outputTokens", "usd", …}, "prices"}
  -h, --help        this help

Examples:
  invocache demo
  npm run demo
  invocache demo --store memory:// --json | jq '.runs[] | {mode, upstreamCalls}'
  invocache demo && invocache ls --namespace demo
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("demo", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const namespace = values.namespace ?? "demo";
    try {
      entryPrefix(namespace);
    } catch (error) {
      throw new UsageError(`--namespace: ${(error as Error).message}`);
    }
    const url = values.store ?? defaultStoreUrl(io.cwd);
    let storeUrl: string;
    try {
      const location = parseStoreUrl(url, io.cwd);
      storeUrl = location.kind === "sqlite" ? location.url : url;
    } catch (error) {
      throw new UsageError(`--store: ${(error as Error).message}`);
    }
    const outDir = resolve(io.cwd, values.out ?? join(".invocache", "demo"));
    const shownOut = relative(io.cwd, outDir) || ".";
    const human = !values.json;
    const s = io.style;

    const store = openStore(storeUrl);
    const model = await startSimulatedModel();
    try {
      const cleared = await clearNamespace(store, namespace);
      await makeDirectory(outDir).catch((error: NodeJS.ErrnoException) => {
        throw new CliError(
          "ERR_OUT_DIR",
          `--out: cannot make the folder ${outDir} (${error.code ?? error.message}); choose a writable folder`,
          { cause: error },
        );
      });
      const demoKey = await demoSigningKey(outDir);
      for (const name of ALL_ARTIFACTS) {
        await rm(join(outDir, name), { force: true });
        await rm(join(outDir, `${name}.intoto.jsonl`), { force: true });
      }
      if (human) {
        io.out(
          `${s.bold("invocache demo")}: a planner → builder → reviewer pipeline, recorded, then replayed\n\n`,
        );
        io.out(
          `  ${s.dim("model ")}  simulated, OpenAI-compatible, ${model.baseUrl} (150–400 ms a call; no network, no key)\n`,
        );
        io.out(
          `  ${s.dim("store ")}  ${store.url}, namespace "${namespace}" (${cleared === 0 ? "empty" : `cleared first: ${plural(cleared, "key")} from an earlier demo`})\n`,
        );
        io.out(`  ${s.dim("output")}  ${shownOut}/ (artifacts and their stamps)\n`);
        io.out(
          `  ${s.dim("key   ")}  ${relative(io.cwd, demoKey.privateKeyPath)} (Ed25519, keyid ${demoKey.key.keyid.slice(0, 12)}, ${demoKey.generated ? "generated now" : "generated by an earlier demo"})\n`,
        );
      }

      const runs: DemoRun[] = [];
      for (const [n, mode, blurb] of [
        [1, "auto", "replays what is recorded, calls the model for the rest and records it"],
        [2, "replay", "every call must be a hit (a miss is an error), so none reaches the model"],
      ] as const) {
        if (human) {
          io.out(`\n${s.bold(`Run ${n}`)} · mode ${s.cyan(mode)}: ${blurb}\n`);
          io.out(
            s.dim(`${stepLine(["step", "role", "id", "attempt", "cache", "time", "verdict"])}\n`),
          );
        }
        const recorder = createRecorder({ store, namespace, mode });
        const before = model.calls;
        const t0 = performance.now();
        let contentHash = "";
        try {
          const steps = await recorder.run(
            async (run) => {
              const out = await runPipeline({
                recorder,
                baseUrl: model.baseUrl,
                outDir,
                key: demoKey.key,
                projectPath: io.cwd,
                ...(human ? { onStep: (r: StepResult) => io.out(`${stepRow(r, s)}\n`) } : {}),
              });
              contentHash = run.contentHash();
              return out;
            },
            { runId: runIdOf(n) },
          );
          const { hits, misses, savedMs, spent, saved } = recorder.stats;
          const result: DemoRun = {
            run: n,
            runId: runIdOf(n),
            mode,
            upstreamCalls: model.calls - before,
            hits,
            misses,
            ms: round(performance.now() - t0),
            savedMs: round(savedMs),
            spent: { ...spent },
            saved: spendOf(saved),
            contentHash,
            steps: steps.map((x) => ({ ...x, ms: round(x.ms) })),
          };
          runs.push(result);
          if (human) io.out(`${runSummary(result, runs[0], s)}\n`);
        } finally {
          await recorder.close();
        }
      }

      // Tool calls write no artifact (and are not stamped): only model steps do.
      const artifacts = [
        ...new Set(
          runs.flatMap((r) => r.steps.flatMap((x) => (x.artifact === "" ? [] : [x.artifact]))),
        ),
      ];
      const reports = await verifyAll(
        io,
        artifacts.map((a) => join(outDir, a)),
        { trust: [demoKey.trusted] },
      );
      const [first, second] = runs as [DemoRun, DemoRun];
      const ok =
        first.upstreamCalls > 0 &&
        second.upstreamCalls === 0 &&
        second.steps.every((x) => x.hit) &&
        reports.every((r) => r.ok);

      if (values.json) {
        printJson(io, {
          ok,
          store: store.url,
          namespace,
          cleared,
          model: model.baseUrl,
          outDir: shownOut,
          runs,
          key: {
            keyid: demoKey.key.keyid,
            privateKey: relative(io.cwd, demoKey.privateKeyPath),
            publicKey: relative(io.cwd, demoKey.publicKeyPath),
            generated: demoKey.generated,
          },
          stamps: reports.map(verifyRow),
          savedMs: second.savedMs,
          saved: second.saved,
          prices: PRICE_SNAPSHOT,
        });
        return ok ? EXIT.ok : EXIT.failed;
      }

      io.out(
        `\n${s.bold("Stamps")} · ${plural(artifacts.length, "artifact")} in ${shownOut}/, one signed stamp per run (recorded, then replayed)\n` +
          s.dim(
            `  verified against the demo's key: --trust ${relative(io.cwd, demoKey.publicKeyPath)}\n`,
          ),
      );
      io.out(
        renderTable(
          ["artifact", "stamps", "id", "signed by", "verified"],
          reports.map((r, i) => [
            artifacts[i]!,
            String(r.stamps.length),
            s.cyan(r.stamps[0]?.id?.slice(0, 12) ?? "-"),
            r.stamps[0]?.trustedBy?.slice(0, 12) ?? "-",
            r.ok ? s.green("ok") : s.red(`FAIL: ${r.problems[0] ?? "no stamp"}`),
          ]),
          { indent: "  ", headerStyle: s.dim, align: ["left", "right"] },
        ),
      );
      io.out(
        `\n${ok ? s.green("✔") : s.red("✘")} Run 2 saved ${s.bold(formatMs(second.savedMs))} of model time, ${s.bold(formatSpend(second.saved))} and ${plural(first.upstreamCalls, "upstream call")}: ${formatMs(first.ms)} → ${formatMs(second.ms)}.\n`,
      );
      io.out(
        s.dim(
          `  Tokens as the model reported them; dollars at ${DEMO_MODEL} prices from ${PRICE_SNAPSHOT.source}@${PRICE_SNAPSHOT.version} (${PRICE_SNAPSHOT.date}), offline.\n`,
        ),
      );
      io.out(
        s.dim(
          "  The prompts carry the time, a session UUID and this checkout's path; normalization\n" +
            "  turns them into {timestamp}, {uuid} and {project}, so run 2 asks the same questions.\n" +
            "  The retry is attempt 1: a new identity, never served the rejected build (RELOOP).\n",
        ),
      );
      const builders = first.steps.filter((x) => x.role === "builder");
      const at = values.store === undefined ? "" : ` --store ${shellQuote(values.store)}`;
      // Run through npm (npm run demo, npx): the bin is not on PATH, npx finds it.
      const bin = io.env.npm_lifecycle_event === undefined ? "invocache" : "npx invocache";
      io.out(`\n${s.bold("Look around")}\n`);
      // A memory:// store ended with this process: ls, show and explain would see it empty.
      if (/^memory:/i.test(storeUrl)) {
        io.out(
          s.dim(
            `  (the memory:// store is gone with the demo, so ls, show and explain have nothing to\n   read; run ${bin} demo without --store to keep the recordings in .invocache/cache.sqlite)\n`,
          ),
        );
      } else {
        io.out(`  ${bin} ls --namespace ${shellQuote(namespace)}${at}\n`);
        io.out(`  ${bin} show ${first.steps[0]!.id.slice(0, 8)}${at}\n`);
        if (builders.length >= 2) {
          io.out(
            `  ${bin} explain ${builders[0]!.id.slice(0, 8)} ${builders[1]!.id.slice(0, 8)}${at}\n`,
          );
        }
        io.out(
          `  ${bin} view${at}   ${s.dim("# both runs in the browser: timeline, retries, diffs")}\n`,
        );
      }
      io.out(
        `  ${bin} verify ${shellQuote(join(shownOut, "plan.md"))} --trust ${shellQuote(relative(io.cwd, demoKey.publicKeyPath))}\n`,
      );
      return ok ? EXIT.ok : EXIT.failed;
    } finally {
      await model.close();
      await store.close();
    }
  },
};

/**
 * The demo's signing key, in `<out>/keys`: generated on the first demo and
 * reused afterwards (keys are never overwritten), so the keyid stays the same
 * from one demo to the next. It signs demo artifacts only.
 */
async function demoSigningKey(outDir: string): Promise<{
  key: SigningKey;
  trusted: TrustedKey;
  privateKeyPath: string;
  publicKeyPath: string;
  generated: boolean;
}> {
  const dir = join(outDir, "keys");
  const privateKeyPath = join(dir, "demo-signing.key.pem");
  const publicKeyPath = join(dir, "demo-signing.pub.pem");
  const exists = await access(privateKeyPath).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await makeDirectory(dir);
    await writeKeyPair(privateKeyPath, publicKeyPath);
  }
  return {
    key: await readSigningKey(privateKeyPath),
    trusted: await readTrustedKey(publicKeyPath),
    privateKeyPath,
    publicKeyPath,
    generated: !exists,
  };
}

/** Delete every key of a namespace (entries, run records, leases); resolves to how many. */
async function clearNamespace(store: Store, namespace: string): Promise<number> {
  const keys: string[] = [];
  for await (const [key] of store.list(`${namespace}:`)) keys.push(key);
  for (const key of keys) await store.delete(key);
  return keys.length;
}

const WIDTHS = [4, 9, 12, 7, 5, 8] as const;

function stepLine(cells: readonly string[]): string {
  const pad = (c: string, i: number) =>
    i >= WIDTHS.length ? c : i === 5 ? c.padStart(WIDTHS[i]!) : c.padEnd(WIDTHS[i]!);
  return `  ${cells.map(pad).join("  ")}`.trimEnd();
}

function stepRow(r: StepResult, s: Style): string {
  const pad = (text: string, i: number) => text + " ".repeat(Math.max(0, WIDTHS[i]! - text.length));
  const cache = r.hit ? s.green(pad("hit", 4)) : s.yellow(pad("miss", 4));
  const verdict =
    r.verdict === null
      ? ""
      : r.verdict === "accepted"
        ? s.green(`accepted${r.reason ? `: ${oneLine(r.reason, 44)}` : ""}`)
        : s.red(`rejected${r.reason ? `: ${oneLine(r.reason, 44)}` : ""}`);
  return `  ${[
    pad(String(r.step), 0),
    pad(r.role, 1),
    s.cyan(shortId(r.id)),
    pad(String(r.attempt), 3),
    `${cache} `,
    formatMs(r.ms).padStart(WIDTHS[5]),
    verdict,
  ].join("  ")}`.trimEnd();
}

function runSummary(run: DemoRun, first: DemoRun | undefined, s: Style): string {
  const same =
    first !== undefined && first !== run
      ? first.contentHash === run.contentHash
        ? s.green(" (same trajectory)")
        : s.red(" (different trajectory!)")
      : "";
  const parts = [
    run.hits > 0 ? plural(run.hits, "hit") : undefined,
    run.misses > 0 ? plural(run.misses, "miss", "misses") : undefined,
    `${plural(run.upstreamCalls, "upstream call")}`,
    `${formatMs(run.ms)} total`,
    run.savedMs > 0 ? `${formatMs(run.savedMs)} saved` : undefined,
    run.upstreamCalls > 0 ? `${formatSpend(run.spent)} spent` : undefined,
    run.hits > 0 ? `${formatSpend(run.saved)} saved` : undefined,
  ].filter((p) => p !== undefined);
  return `  ${s.bold(parts.join(", "))} · run hash ${run.contentHash.slice(0, 12)}${same}`;
}

/** The tokens and dollars of a tally's spend (without its time). */
function spendOf(s: Spend & { ms?: number }): Spend {
  const { ms: _ms, ...spend } = s;
  return spend;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
