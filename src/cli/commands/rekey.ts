/**
 * `invocache rekey`: apply a declared change to the manifests of recorded
 * entries and move each to the identity its new manifest hashes to, so that
 * recordings made before a change that does not change the answer (an SDK
 * that starts sending a new default field) replay again. The change is the
 * user's statement that the recorded answer holds for the new request; the
 * command shows what it does, `--dry-run` changes nothing.
 */
import { resolve } from "node:path";
import { shortId } from "../../identity/index.js";
import type { JsonValue } from "../../json/index.js";
import { shellQuote } from "../../shell/index.js";
import { locateSource, openSourceStore } from "../../source/index.js";
import { defaultStampRoot, StampIndex } from "../../viewer/index.js";
import { parseCommandArgs } from "../args.js";
import { type Command, printJson } from "../command.js";
import { EXIT, UsageError } from "../errors.js";
import { plural } from "../format.js";
import type { Io } from "../io.js";
import { applyToCassettes, applyToStore, type RekeyWrites } from "../rekey/apply.js";
import {
  applyChanges,
  type ManifestChange,
  parseSet,
  parseUnset,
  parseWhere,
} from "../rekey/changes.js";
import { conflictError, type Prefer, planRekey, type RekeyPlan } from "../rekey/plan.js";
import { renormalize } from "../rekey/table-history.js";
import { openSource, SOURCE_OPTIONS } from "../source.js";
import { warnProblems } from "./ls.js";

const OPTIONS = {
  ...SOURCE_OPTIONS,
  set: { type: "string", multiple: true },
  unset: { type: "string", multiple: true },
  where: { type: "string", multiple: true },
  prefer: { type: "string" },
  stamps: { type: "string" },
  renormalize: { type: "boolean" },
  "dry-run": { type: "boolean", short: "n" },
} as const;

/** A stamp that names an identity the re-key moved. */
export interface MovedStamp {
  artifact: string;
  line: number;
  id: string;
  toId: string;
}

/** The `--json` shape of `invocache rekey` (docs/cli.md). */
export interface RekeyReport {
  source: string;
  dryRun: boolean;
  matched: number;
  unchanged: number;
  moved: Array<{ key: string; toKey: string; id: string; toId: string; cassette?: string }>;
  retired: Array<{ key: string; toKey: string; cassette?: string }>;
  replaced: Array<{ key: string; cassette?: string }>;
  conflicts: RekeyPlan["conflicts"];
  stamps: MovedStamp[];
  /** Keys left as they were because another process re-recorded them meanwhile. */
  changedMeanwhile: string[];
  /** `--renormalize`: entries that hold under the current table (same identity, `meta.normalization` updated). */
  renormalized: number;
  /** `--renormalize`: entries that would need their raw prompt; left as they are. */
  reRecord: RekeyPlan["reRecord"];
  /** Retries that stay under their key whose `meta.parent` now names the parent's new id. */
  relinked: number;
}

/**
 * @example
 * // invocache rekey --cassette cassettes --set params.parallel_tool_calls=true --where role=planner --dry-run
 */
export const rekeyCommand: Command = {
  name: "rekey",
  help: `Usage: invocache rekey (--set PATH=JSON | --unset PATH | --renormalize)... [--where FIELD=VALUE]... [--store URL | --cassette PATH] [--prefer newest|oldest] [--dry-run] [--json]

Change the manifests of recorded entries and move each to the identity its
new manifest has: a statement that the recorded answer holds for the new
request (an SDK that started sending a field, a renamed tool). The identity
is computed as every recording computes it.

  --set PATH=JSON     set a manifest field: params.parallel_tool_calls=true,
                      'params["a.b"]="x"', model='"gpt-5"' (JSON: a string keeps its quotes)
  --unset PATH        remove a manifest field (params.seed)
  --where FIELD=VALUE only entries whose FIELD is VALUE: role, model, kind (model|tool),
                      cassette (a file of a folder), namespace; repeat a field for any
                      of several values, different fields must all match
  --prefer newest|oldest
                      when two entries would end up under one key, keep this one
                      (by recording time); without it such a conflict changes nothing
  --renormalize       entries recorded under an older normalization table (meta.normalization):
                      those that hold under the current one are marked so; those that
                      would need their raw prompt are listed to re-record, never guessed
  --stamps DIR        where to look for provenance stamps naming a moved identity
                      (default: the folder of the store or cassettes)

Options:
  --store URL        a store URL (default: sqlite://.invocache/cache.sqlite)
  --cassette PATH    a YAML cassette, or a folder of them (each rewritten once,
                     atomically, under its lock)
  --namespace NS     only this namespace
  -n, --dry-run      show what would change; change nothing
  --json             {"source", "dryRun", "matched", "unchanged", "moved", "retired",
                     "replaced", "conflicts", "stamps", "changedMeanwhile", "renormalized",
                     "reRecord", "relinked"}
  -h, --help         this help

Examples:
  invocache rekey --cassette cassettes --set params.parallel_tool_calls=true --dry-run
  invocache rekey --store redis://127.0.0.1:6379 --unset params.seed --where model=gpt-4o
  invocache rekey --cassette cassettes --renormalize --dry-run
`,
  async run(argv, io) {
    const { values } = parseCommandArgs("rekey", argv, OPTIONS, { min: 0, max: 0, names: "" });
    const changes: ManifestChange[] = [
      ...(values.set ?? []).map(parseSet),
      ...(values.unset ?? []).map(parseUnset),
    ];
    const renormalizing = values.renormalize === true;
    if (changes.length === 0 && !renormalizing) {
      throw new UsageError(
        "rekey: say what changes with --set PATH=JSON, --unset PATH (e.g. --set params.parallel_tool_calls=true) or --renormalize; see `invocache rekey --help`",
      );
    }
    const prefer = values.prefer;
    if (prefer !== undefined && prefer !== "newest" && prefer !== "oldest") {
      throw new UsageError(`--prefer must be newest or oldest, got ${JSON.stringify(prefer)}`);
    }
    const picked = parseWhere(values.where ?? []);
    const dryRun = values["dry-run"] === true;
    // Read through the same source every command reads; write through a
    // handle of our own (the source's store is read-only unless pruning).
    const source = openSource(values, io);
    let plan: RekeyPlan;
    try {
      const contents = await source.read();
      if (!values.json) warnProblems(io, contents.problems.slice(0, 1), contents.problems.length);
      plan = planRekey(
        contents.entries,
        picked,
        (m: JsonValue) => applyChanges(m, changes),
        prefer as Prefer | undefined,
        renormalizing ? renormalize : undefined,
      );
    } finally {
      await source.close();
    }
    if (plan.conflicts.length > 0 && prefer === undefined) throw conflictError(plan.conflicts);
    const location = locateSource(
      { store: values.store, cassette: values.cassette },
      { cwd: io.cwd },
    );
    const stampRoot =
      values.stamps === undefined
        ? defaultStampRoot(
            location.kind === "store" ? { store: location.url } : { cassette: location.path },
            location.kind === "store" ? location.url : location.path,
          )
        : resolve(io.cwd, values.stamps);
    const stamps = await movedStamps(plan, stampRoot);
    let writes: RekeyWrites = { written: [], deleted: [], changedMeanwhile: [] };
    const anything = plan.moves.length + plan.retired.length > 0;
    if (!dryRun && anything) {
      if (location.kind === "cassette") {
        writes = await applyToCassettes(location.path, location.folder, plan);
      } else {
        const store = openSourceStore(location);
        try {
          writes = await applyToStore(store, source.url, plan);
        } finally {
          await store.close();
        }
      }
    }
    const report = reportOf(source.url, dryRun, plan, stamps, writes);
    if (values.json) printJson(io, report);
    else {
      // The stamp command a person pastes names the same source.
      const from = [
        ...(values.cassette === undefined ? [] : ["--cassette", shellQuote(values.cassette)]),
        ...(values.store === undefined ? [] : ["--store", shellQuote(source.url)]),
        ...(values.namespace === undefined ? [] : ["--namespace", shellQuote(values.namespace)]),
      ].join(" ");
      printReport(io, report, stampRoot, from);
    }
    return writes.changedMeanwhile.length > 0 ? EXIT.failed : EXIT.ok;
  },
};

/** Stamps naming an identity the plan moves away from. */
async function movedStamps(plan: RekeyPlan, root: string): Promise<MovedStamp[]> {
  const index = new StampIndex(root);
  const out: MovedStamp[] = [];
  const seen = new Set<string>();
  for (const m of [...plan.moves, ...plan.retired]) {
    if (seen.has(m.from.id) || m.toId === m.from.id) continue;
    seen.add(m.from.id);
    for (const ref of await index.referencing(m.from.id)) {
      out.push({ artifact: ref.artifact, line: ref.line, id: m.from.id, toId: m.toId });
    }
  }
  return out;
}

function reportOf(
  url: string,
  dryRun: boolean,
  plan: RekeyPlan,
  stamps: MovedStamp[],
  writes: RekeyWrites,
): RekeyReport {
  const where = (c: string | undefined) => (c === undefined ? {} : { cassette: c });
  return {
    source: url,
    dryRun,
    matched: plan.matched,
    unchanged: plan.unchanged,
    moved: plan.moves
      .filter((m) => m.toId !== m.from.id)
      .map((m) => ({
        key: m.from.key,
        toKey: m.toKey,
        id: m.from.id,
        toId: m.toId,
        ...where(m.from.cassette),
      })),
    retired: plan.retired.map((m) => ({
      key: m.from.key,
      toKey: m.toKey,
      ...where(m.from.cassette),
    })),
    replaced: plan.replaced.map((r) => ({ key: r.key, ...where(r.cassette) })),
    conflicts: plan.conflicts,
    stamps,
    changedMeanwhile: writes.changedMeanwhile,
    renormalized: plan.renormalized,
    reRecord: plan.reRecord,
    relinked: plan.relinked,
  };
}

function printReport(io: Io, r: RekeyReport, stampRoot: string, from: string): void {
  const s = io.style;
  for (const m of r.moved) {
    const file = m.cassette === undefined ? "" : `${m.cassette}: `;
    io.out(`  ${file}${s.cyan(shortId(m.id))} → ${s.cyan(shortId(m.toId))}  ${m.toKey}\n`);
  }
  for (const m of r.retired) {
    io.out(`  ${m.key} ${s.dim(`dropped: ${m.toKey} holds an equal or preferred entry`)}\n`);
  }
  for (const m of r.replaced) io.out(`  ${m.key} ${s.dim("replaced by the preferred entry")}\n`);
  for (const c of r.conflicts) {
    io.out(`  conflict at ${c.key}: ${c.keys.join(", ")}; kept ${c.kept ?? "none"}\n`);
  }
  if (r.renormalized > 0) {
    io.out(
      `${plural(r.renormalized, "entry holds", "entries hold")} under the current normalization table as recorded (same identity; meta.normalization ${r.dryRun ? "would be" : "was"} updated).\n`,
    );
  }
  if (r.relinked > 0) {
    io.out(
      `${plural(r.relinked, "retry names", "retries name")} a moved parent: meta.parent ${r.dryRun ? "would be" : "was"} updated in place.\n`,
    );
  }
  if (r.reRecord.length > 0) {
    io.out(
      `${s.yellow("Re-record")} ${plural(r.reRecord.length, "entry", "entries")}: each would need its raw prompt under the current table, which the recording does not keep (left as ${r.reRecord.length === 1 ? "it is" : "they are"}):\n`,
    );
    for (const x of r.reRecord) {
      io.out(`  ${x.cassette === undefined ? "" : `${x.cassette}: `}${x.key}  ${s.dim(x.why)}\n`);
    }
  }
  const verb = r.dryRun ? s.yellow("Would re-key") : "Re-keyed";
  io.out(
    `${verb} ${plural(r.moved.length, "entry", "entries")} in ${r.source} (${r.matched} matched, ${r.unchanged} unchanged${r.retired.length > 0 ? `, ${r.retired.length} dropped` : ""}).${r.dryRun ? " (dry run: nothing changed)" : ""}\n`,
  );
  if (r.stamps.length > 0) {
    io.out(
      `\n${plural(r.stamps.length, "provenance stamp", "provenance stamps")} under ${stampRoot} name a re-keyed identity. They still verify against their artifacts (a stamp records what produced the artifact then); to tie an artifact to the entry as it is now, stamp it again (a new line, the old one stays as history):\n`,
    );
    // One command per artifact and new id, however many of its lines name the old one.
    const byArtifact = new Map<string, MovedStamp[]>();
    for (const st of r.stamps) {
      const k = `${st.artifact}\0${st.toId}`;
      byArtifact.set(k, [...(byArtifact.get(k) ?? []), st]);
    }
    for (const group of byArtifact.values()) {
      const st = group[0]!;
      const lines = group.map((g) => g.line).join(", ");
      io.out(
        `  ${st.artifact} (line${group.length === 1 ? "" : "s"} ${lines}): ${shortId(st.id)} → ${shortId(st.toId)}   invocache stamp ${shellQuote(resolve(stampRoot, st.artifact))} --id ${shortId(st.toId)}${from === "" ? "" : ` ${from}`}\n`,
      );
    }
  }
  if (r.changedMeanwhile.length > 0) {
    io.err(
      `${r.changedMeanwhile.length} old ${r.changedMeanwhile.length === 1 ? "key was" : "keys were"} recorded again while rekey ran and kept: ${r.changedMeanwhile.join(", ")}\n`,
    );
  }
}
