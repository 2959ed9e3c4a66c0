/**
 * `invocache diff RUN_A RUN_B`: where two stored runs of a pipeline diverge.
 * The comparison is the viewer's "compare runs" (`diffRuns`); this prints it,
 * or its JSON for CI. Exit 0 when both asked the same questions in the same
 * order, 1 when they diverge, 2 for a usage error (a run that is not stored).
 */
import { readCassette } from "../../cassette/index.js";
import { shortId } from "../../identity/index.js";
import type { JsonValue } from "../../json/index.js";
import { cassetteFiles, locateSource, openSourceStore, SourceError } from "../../source/index.js";
import { parseRunKey, runKey, type Store, validateEntry } from "../../store/index.js";
import { diffRuns, type RunTrajectory, type StepSide } from "../../viewer/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, isStoreError, storeFailure, UsageError } from "../errors.js";
import { renderTable } from "../format.js";
import type { Io } from "../io.js";
import { SOURCE_OPTIONS } from "../source.js";

/**
 * @example
 * // invocache diff demo-1 demo-2 --json
 */
export const diffCommand: Command = {
  name: "diff",
  help: `Usage: invocache diff RUN_A RUN_B [--store URL | --cassette PATH] [--namespace NS] [--json]

Where two stored runs diverge: the first step whose identity differs, why
(the manifest fields, as \`invocache explain\` names them), and every step side
by side with how it was served, its attempt and its verdict. Runs are stored
when they have an explicit runId (recorder.run(fn, { runId })).

  RUN_A, RUN_B       run ids: in --namespace; without it in "default", or NS/RUN_ID,
                     or the one namespace that has that run

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them
  --namespace NS     the runs' namespace
  --json             {"a", "b", "same", "divergedAt", "why", "note", "steps"} (docs/cli.md)
  -h, --help         this help

Exit status: 0 the same calls in the same order, 1 they diverge, 2 usage error.

Examples:
  invocache diff demo-1 demo-2
  invocache diff nightly-41 nightly-42 --store redis://127.0.0.1:6379 --json
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs("diff", argv, SOURCE_OPTIONS, {
      min: 2,
      max: 2,
      names: "RUN_A RUN_B",
    });
    const reader = openReader(values, io);
    try {
      const a = await findRun(reader, positionals[0]!, values.namespace);
      const b = await findRun(reader, positionals[1]!, values.namespace);
      const diff = await diffRuns(a, b, async (key) => {
        const value = await reader.get(key);
        if (value === undefined) return undefined;
        try {
          return validateEntry(value, `${reader.url} ${key}`);
        } catch {
          return undefined;
        }
      });
      if (values.json) printJson(io, diff);
      else printDiff(io, diff);
      return diff.same ? EXIT.ok : EXIT.failed;
    } finally {
      await reader.close();
    }
  },
};

/** Keyed reads from the source: a store, or every item of a cassette or folder. */
interface Reader {
  url: string;
  get(key: string): Promise<JsonValue | undefined>;
  /** The namespaces that hold a run record `runId` (a scan of the keys: only when none was named). */
  namespacesOf(runId: string): Promise<string[]>;
  close(): Promise<void>;
}

function openReader(
  flags: { store?: string | undefined; cassette?: string | undefined },
  io: Io,
): Reader {
  if (flags.store !== undefined && flags.cassette !== undefined) {
    throw new UsageError("pass --store or --cassette, not both");
  }
  let location: ReturnType<typeof locateSource>;
  try {
    location = locateSource({ store: flags.store, cassette: flags.cassette }, { cwd: io.cwd });
  } catch (error) {
    if (error instanceof SourceError) throw new UsageError(error.message);
    throw error;
  }
  if (location.kind === "cassette") {
    const path = location.path;
    let items: Map<string, JsonValue> | undefined;
    return {
      url: `cassette://${path}`,
      async get(key) {
        if (items === undefined) {
          items = new Map();
          const files = location.folder ? cassetteFiles(path) : [path];
          for (const file of files) {
            for (const item of await readCassette(file)) items.set(item.key, item.value);
          }
        }
        return items.get(key);
      },
      async namespacesOf(runId) {
        await this.get("");
        return runNamespaces(items?.keys() ?? [], runId);
      },
      async close() {},
    };
  }
  const url = location.display;
  let store: Store | undefined;
  return {
    url,
    async get(key) {
      if (!location.exists) return undefined;
      store ??= openSourceStore(location, { readOnly: true });
      try {
        return await store.get(key);
      } catch (error) {
        if (!isStoreError(error)) throw error;
        throw storeFailure(error, `read ${key}`, url);
      }
    },
    async namespacesOf(runId) {
      if (!location.exists) return [];
      store ??= openSourceStore(location, { readOnly: true });
      const keys: string[] = [];
      try {
        for await (const [key] of store.list(""))
          if (parseRunKey(key) !== undefined) keys.push(key);
      } catch (error) {
        if (!isStoreError(error)) throw error;
        throw storeFailure(error, "list the run records", url);
      }
      return runNamespaces(keys, runId);
    },
    async close() {
      await store?.close();
    },
  };
}

/** The run record `ref` names: RUN_ID in the namespace, or NS/RUN_ID. */
async function findRun(
  reader: Reader,
  ref: string,
  namespace: string | undefined,
): Promise<RunTrajectory> {
  const tries: Array<[string, string]> = [[namespace ?? "default", ref]];
  const slash = ref.indexOf("/");
  if (namespace === undefined && slash > 0) tries.push([ref.slice(0, slash), ref.slice(slash + 1)]);
  for (const [ns, runId] of tries) {
    let key: string;
    try {
      key = runKey(ns, runId);
    } catch (error) {
      throw new UsageError(`${JSON.stringify(ref)}: ${(error as Error).message}`);
    }
    const value = await reader.get(key);
    if (value !== undefined) return trajectoryOf(ns, runId, value, reader.url);
  }
  if (namespace === undefined) {
    // Not in "default": the one namespace that has it (the demo's is "demo").
    const found = await reader.namespacesOf(ref);
    if (found.length === 1) {
      const value = await reader.get(runKey(found[0]!, ref));
      if (value !== undefined) return trajectoryOf(found[0]!, ref, value, reader.url);
    }
    if (found.length > 1) {
      throw new UsageError(
        `run ${JSON.stringify(ref)} is in several namespaces (${found.join(", ")}): name one with --namespace`,
      );
    }
  }
  throw new UsageError(
    `no run ${JSON.stringify(ref)} in ${reader.url}${namespace === undefined ? "" : ` namespace ${namespace}`}: a run is stored when it has an explicit runId (recorder.run(fn, { runId }))`,
  );
}

function runNamespaces(keys: Iterable<string>, runId: string): string[] {
  const out: string[] = [];
  for (const key of keys) {
    const parts = parseRunKey(key);
    if (parts?.runId === runId) out.push(parts.namespace);
  }
  return out.sort();
}

function trajectoryOf(
  namespace: string,
  runId: string,
  value: JsonValue,
  url: string,
): RunTrajectory {
  const r = value as {
    contentHash?: unknown;
    calls?: unknown;
    served?: unknown;
    verdicts?: unknown;
  };
  if (typeof r.contentHash !== "string" || !Array.isArray(r.calls)) {
    throw new UsageError(`${url} ${namespace}:run:${runId} is not a run record`);
  }
  const served = Array.isArray(r.served) ? r.served : [];
  const calls = r.calls.map((c, i) => {
    const [id, occ] = String(c).split(":");
    const how = served[i];
    return {
      id: id ?? "",
      occurrence: Number(occ),
      served: typeof how === "string" ? how : undefined,
    };
  });
  const verdicts = (Array.isArray(r.verdicts) ? r.verdicts : []).map((v) => {
    const [id, occ, verdict] = String(v).split(":");
    return { id: id ?? "", occurrence: Number(occ), verdict: verdict ?? "" };
  });
  return { namespace, runId, contentHash: r.contentHash, calls, verdicts };
}

function printDiff(io: Io, d: Awaited<ReturnType<typeof diffRuns>>): void {
  const s = io.style;
  const names = `${d.a.runId} and ${d.b.runId}`;
  if (d.same) {
    io.out(
      `${s.green("Same")}: runs ${names} asked the same ${d.a.steps} ${d.a.steps === 1 ? "question" : "questions"} in the same order (content hash ${d.a.contentHash.slice(0, 12)}).\n`,
    );
  } else {
    io.out(
      `${s.yellow("Diverged")}: runs ${names} differ at step ${d.divergedAt} (${d.a.steps} and ${d.b.steps} steps).\n`,
    );
    if (d.note !== null) io.out(`  ${d.note}\n`);
    for (const w of d.why) {
      io.out(`  ${w.summary}\n`);
      if (w.diff !== undefined) io.out(`${w.diff.replace(/^/gm, "      ")}\n`);
    }
    io.out("\n");
  }
  const cell = (x: StepSide | null): string[] =>
    x === null
      ? ["–", "", "", "", ""]
      : [
          x.role ?? "?",
          `${s.cyan(shortId(x.id))}:${x.occurrence}`,
          x.attempt === null ? "?" : String(x.attempt),
          x.served ?? "",
          x.verdict ?? "",
        ];
  const rows = d.steps.map((st) => [
    `${st.step === d.divergedAt ? "▶ " : ""}${st.step}`,
    st.same ? "=" : "≠",
    ...cell(st.a),
    ...cell(st.b),
  ]);
  io.out(
    renderTable(
      [
        "step",
        "",
        "A role",
        "A id:occ",
        "att",
        "served",
        "verdict",
        "B role",
        "B id:occ",
        "att",
        "served",
        "verdict",
      ],
      rows,
      { headerStyle: s.dim, align: ["right"] },
    ),
  );
}
