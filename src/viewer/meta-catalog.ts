/**
 * The viewer over a store's stored metadata (`Store.listMeta`): the
 * overview's page of entries, its search and its totals, without reading a
 * stored value, so the viewer opens at once at any size.
 *
 * - A page is one query in recording-time order (newest first), stopped as
 *   soon as the page is full: the first page of a 1M-entry store reads 51
 *   metadata rows.
 * - Search covers what metadata holds: an id prefix (8+ hex digits), else
 *   text in the task, role, model or tool name; with the namespace, role
 *   and model filters. (Prompt text is not in the metadata: the full read,
 *   used where a store has none, searches the start of the prompt too.)
 * - Totals (entries, namespaces, roles, models, model time, tokens and
 *   cost) come from the store's sums (`Store.statsMeta`, meta-totals.ts):
 *   where the database keeps a summary, a few hundred rows at any size;
 *   the run records by each namespace's key prefix, the first problems
 *   from the front of the time order. A store without sums (or with runs
 *   outside its entries' namespaces) gets one pass over the metadata in
 *   constant memory instead. Either runs in the background and is
 *   refreshed like the catalog. The stored run records (one value per
 *   stored run, not per entry) are read, and the metadata of the entries
 *   they name looked up one by one, for the recent runs and their spend.
 * - An entry page reads that entry, and the metadata of its siblings and
 *   its parent, by key prefix.
 */
import { MIN_PREFIX_LENGTH } from "../identity/index.js";
import type { CallKind } from "../identity/internal.js";
import type { JsonValue } from "../json/index.js";
import { type Entry, type Store, type StoredMeta, validateEntry } from "../store/index.js";
import { type SummedTotals, summedTotals } from "./meta-totals.js";
import { type Recorded, type RunSpend, runSpend, SpendTally } from "./spend.js";
import {
  type CatalogSnapshot,
  type EntrySummary,
  parseRun,
  type RunRecord,
  summarize,
  toolLabel,
} from "./summary.js";

/** What the overview's cards, namespace table and recent runs show. */
export interface MetaTotals {
  entries: number;
  namespaces: Array<{ name: string; entries: number; ms: number; bytes: number }>;
  roles: string[];
  models: string[];
  totalMs: number;
  recorded: Recorded;
  /** Values under entry keys that are not entries. */
  problems: Array<{ key: string; message: string }>;
  /** Every stored run, newest first. */
  runs: RunRecord[];
  /** Per stored run (by key): what it spent and saved. */
  runSpend: Map<string, RunSpend>;
  spent: Recorded;
  saved: Recorded;
  readAt: number;
}

/** The overview's filters (see views/overview.ts). */
export interface MetaSearch {
  q: string;
  role: string;
  model: string;
  namespace: string;
}

/** One page of entries, newest first. */
export interface MetaPage {
  rows: EntrySummary[];
  /** More entries match after this page. */
  more: boolean;
  /** How many match in all, when known without reading further. */
  total: number | undefined;
}

/** What a count of the totals finds before the runs are read. */
type Counted = SummedTotals & { problems: MetaTotals["problems"]; runKeys: string[] };

const FACET_LIMIT = 500;
const PROBLEMS_KEPT = 20;
/** The runs an entry page reads around an entry (the entries each calls are read). */
const RUNS_AROUND = 5;

/**
 * An entry's summary from its stored metadata. Not in metadata, so absent
 * here: `parent` and `reason` (an entry page reads the entry for them),
 * and the prompt text search would look in.
 */
export function summaryOfMeta(m: StoredMeta): EntrySummary {
  const tool =
    m.tool === undefined
      ? undefined
      : toolLabel({
          name: m.tool.name,
          server: m.tool.server ?? "",
          method: "",
          args: null,
          v1: m.tool.version === 1,
        });
  const role = m.role ?? "";
  const task = m.task ?? "";
  const model = m.model ?? "";
  return {
    key: m.key,
    namespace: m.namespace ?? "",
    id: m.id ?? "",
    occurrence: m.occurrence ?? 0,
    kind: m.tool === undefined ? "model" : "tool",
    tool,
    role,
    model,
    task,
    attempt: m.attempt ?? 0,
    parent: undefined,
    verdict: m.verdict,
    reason: undefined,
    recordedAt: m.recordedAt ?? "",
    durationMs: m.durationMs ?? 0,
    usage: m.tool === undefined ? m.usage : undefined,
    bytes: m.bytes,
    file: undefined,
    text: `${task} ${role} ${tool ?? model}`.toLowerCase(),
  };
}

/** Whether an entry passes the overview's search (id prefix or metadata text, and the filters). */
export function searchMatcher(search: MetaSearch): (e: EntrySummary) => boolean {
  const q = search.q.toLowerCase();
  // 8+ hex digits is an id prefix, as `invocache show` takes it; shorter is text.
  const idOnly = q.length >= MIN_PREFIX_LENGTH && /^[0-9a-f]{1,64}$/.test(q);
  return (e) =>
    (q === "" || (idOnly ? e.id.startsWith(q) : e.text.includes(q))) &&
    (search.role === "" || e.role === search.role) &&
    (search.model === "" || e.model === search.model) &&
    (search.namespace === "" || e.namespace === search.namespace);
}

/**
 * The viewer's reads from stored metadata. The store must answer
 * `listMeta` (the catalog checks that before it makes one).
 */
export class MetaCatalog {
  #totals: MetaTotals | undefined;
  #loading: Promise<MetaTotals> | undefined;
  #lastLoadMs = 0;

  constructor(
    readonly store: Store,
    readonly refreshMs: number,
  ) {}

  #rows(query: Parameters<NonNullable<Store["listMeta"]>>[0]): AsyncIterable<StoredMeta> {
    return this.store.listMeta!(query);
  }

  /**
   * Entries `offset`… matching `search`, newest first, at most `size`:
   * one query that stops when the page is full.
   */
  async page(search: MetaSearch, offset: number, size: number): Promise<MetaPage> {
    const filtered = search.q !== "" || search.role !== "" || search.model !== "";
    const matches = searchMatcher(search);
    const counted = filtered ? undefined : this.#countOf(search.namespace);
    if (counted !== undefined && offset >= counted / 2 && offset < counted) {
      // A page in the older half (the last one): read from the oldest end, so
      // the query stops after `counted - offset` rows, not `offset`.
      const back: EntrySummary[] = [];
      for await (const m of this.#rows({
        order: "recordedAt",
        entriesOnly: true,
        ...(search.namespace === "" ? {} : { prefix: `${search.namespace}:` }),
        limit: counted - offset,
      }))
        if (m.kind === "entry") back.push(summaryOfMeta(m));
      const rows = back.reverse().slice(0, size);
      return { rows, more: offset + rows.length < counted, total: counted };
    }
    const rows = this.#rows({
      order: "recordedAtDesc",
      entriesOnly: true,
      ...(search.namespace === "" ? {} : { prefix: `${search.namespace}:` }),
      // Unfiltered, the database stops for us; filtered, we stop reading below.
      ...(filtered ? {} : { limit: offset + size + 1 }),
    });
    const out: EntrySummary[] = [];
    let skipped = 0;
    let more = false;
    for await (const m of rows) {
      if (m.kind !== "entry") continue;
      const e = summaryOfMeta(m);
      if (!matches(e)) continue;
      if (skipped < offset) {
        skipped++;
        continue;
      }
      if (out.length === size) {
        more = true;
        break;
      }
      out.push(e);
    }
    // Unfiltered, the totals know how many there are (when counted).
    const total = more ? counted : skipped + out.length;
    return { rows: out, more, total };
  }

  /** How many entries (of a namespace) the last count found, if it ended. */
  #countOf(namespace: string): number | undefined {
    const t = this.#totals;
    if (t === undefined) return undefined;
    return namespace === ""
      ? t.entries
      : (t.namespaces.find((n) => n.name === namespace)?.entries ?? 0);
  }

  /** The totals as last counted, or undefined before the first count ends. */
  totalsNow(): MetaTotals | undefined {
    const current = this.#totals;
    if (current !== undefined) {
      // Counting a big store takes a while: at most a tenth of the time, as the catalog.
      const every = Math.max(this.refreshMs, 10 * this.#lastLoadMs);
      if (Date.now() - current.readAt > every) void this.#reload().catch(() => {});
    } else void this.#reload().catch(() => {});
    return current;
  }

  /** The totals: the last count, or the first one when none has ended yet. */
  totals(): Promise<MetaTotals> {
    return this.totalsNow() !== undefined ? Promise.resolve(this.#totals!) : this.#reload();
  }

  #reload(): Promise<MetaTotals> {
    if (this.#loading !== undefined) return this.#loading;
    const t0 = Date.now();
    this.#loading = this.#count()
      .then((t) => {
        this.#lastLoadMs = Date.now() - t0;
        this.#totals = t;
        return t;
      })
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }

  async #count(): Promise<MetaTotals> {
    const counted = (await this.#summed()) ?? (await this.#walk());
    const { runKeys, ...totals } = counted;
    const runs = await this.#runs(runKeys);
    const byKey = await this.#metaOfCalls(runs);
    const runSpends = new Map<string, RunSpend>();
    const spent = new SpendTally();
    const saved = new SpendTally();
    for (const r of runs) {
      const entryOf = (c: { id: string; occurrence: number }) =>
        byKey.get(`${r.namespace}:e:${c.id}:${c.occurrence}`);
      runSpends.set(r.key, runSpend(r, entryOf));
      for (const c of r.calls) {
        const e = entryOf(c);
        if (e === undefined) continue;
        if (c.served === "hit") saved.add(e);
        else if (c.served === "recorded") spent.add(e);
      }
    }
    return {
      ...totals,
      runs,
      runSpend: runSpends,
      spent: spent.done(),
      saved: saved.done(),
      readAt: Date.now(),
    };
  }

  /**
   * The totals from the store's sums (`Store.statsMeta`: a few hundred
   * rows where the database keeps them, see meta-totals.ts), the run keys
   * by each namespace's key prefix and the first problems from the front of
   * the time order (where they sort). Undefined when the store has no sums,
   * or holds runs outside the namespaces of its entries (the walk finds them).
   */
  async #summed(): Promise<Counted | undefined> {
    if (this.store.statsMeta === undefined) return undefined;
    const stats = await this.store.statsMeta();
    const totals = summedTotals(stats, FACET_LIMIT);
    const runKeys: string[] = [];
    if (stats.runs > 0)
      for (const n of totals.namespaces)
        for await (const m of this.#rows({ prefix: `${n.name}:run:` }))
          if (m.kind === "run") runKeys.push(m.key);
    if (runKeys.length !== stats.runs) return undefined;
    const problems: MetaTotals["problems"] = [];
    if (stats.problems > 0) {
      for await (const m of this.#rows({ order: "recordedAt", limit: PROBLEMS_KEPT })) {
        if (m.kind !== "problem") break;
        problems.push({ key: m.key, message: `${this.store.url} ${m.problem ?? m.key}` });
      }
      if (problems.length === 0 && stats.firstProblem !== undefined)
        problems.push({
          key: stats.firstProblem.key,
          message: `${this.store.url} ${stats.firstProblem.problem}`,
        });
    }
    return { ...totals, problems, runKeys };
  }

  /** The totals by one pass over every row's metadata, in constant memory. */
  async #walk(): Promise<Counted> {
    const ns = new Map<string, { name: string; entries: number; ms: number; bytes: number }>();
    const roles = new Set<string>();
    const models = new Set<string>();
    const tally = new SpendTally();
    const problems: MetaTotals["problems"] = [];
    const runKeys: string[] = [];
    let entries = 0;
    let totalMs = 0;
    for await (const m of this.#rows({})) {
      if (m.kind === "run") runKeys.push(m.key);
      else if (m.kind === "problem") {
        if (problems.length < PROBLEMS_KEPT)
          problems.push({ key: m.key, message: `${this.store.url} ${m.problem ?? m.key}` });
      } else if (m.kind === "entry") {
        const e = summaryOfMeta(m);
        entries++;
        totalMs += e.durationMs;
        tally.add(e);
        let n = ns.get(e.namespace);
        if (n === undefined) {
          n = { name: e.namespace, entries: 0, ms: 0, bytes: 0 };
          ns.set(e.namespace, n);
        }
        n.entries++;
        n.ms += e.durationMs;
        n.bytes += e.bytes;
        if (roles.size < FACET_LIMIT * 4) roles.add(e.role);
        if (e.model !== "" && models.size < FACET_LIMIT * 4) models.add(e.model);
      }
    }
    return {
      entries,
      namespaces: [...ns.values()].sort((a, b) => a.name.localeCompare(b.name)),
      roles: [...roles].sort().slice(0, FACET_LIMIT),
      models: [...models].sort().slice(0, FACET_LIMIT),
      totalMs,
      recorded: tally.done(),
      problems,
      runKeys,
    };
  }

  /** The stored run records (one value each), newest first. */
  async #runs(keys: readonly string[]): Promise<RunRecord[]> {
    const out: RunRecord[] = [];
    for (const key of keys) {
      const m = /^([^:]+):run:(.+)$/.exec(key);
      if (m === null) continue;
      const value = await this.store.get(key);
      if (value === undefined) continue;
      const r = parseRun(key, m[1]!, m[2]!, value, undefined);
      if (r !== undefined) out.push(r);
    }
    return out.sort((a, b) => (a.endedAt < b.endedAt ? 1 : a.endedAt > b.endedAt ? -1 : 0));
  }

  /** The summaries of the entries the runs call, from their metadata, by key. */
  async #metaOfCalls(runs: readonly RunRecord[]): Promise<Map<string, EntrySummary>> {
    const keys = new Set<string>();
    for (const r of runs)
      for (const c of r.calls) keys.add(`${r.namespace}:e:${c.id}:${c.occurrence}`);
    const out = new Map<string, EntrySummary>();
    for (const key of keys) {
      const m = await this.metaOf(key);
      if (m !== undefined) out.set(key, summaryOfMeta(m));
    }
    return out;
  }

  /**
   * The newest `limit` entries of `namespace` with `role` and `kind`, other
   * than identity `exceptId` (the misses page's candidates): one query in
   * time order, stopped when it has them.
   */
  async candidates(
    namespace: string,
    role: string,
    kind: CallKind,
    exceptId: string,
    limit: number,
  ): Promise<EntrySummary[]> {
    const out: EntrySummary[] = [];
    if (limit < 1) return out;
    const rows = this.#rows({
      order: "recordedAtDesc",
      entriesOnly: true,
      prefix: `${namespace}:`,
    });
    for await (const m of rows) {
      if (m.kind !== "entry" || m.role !== role || m.id === exceptId) continue;
      const e = summaryOfMeta(m);
      if (e.kind !== kind) continue;
      out.push(e);
      if (out.length === limit) break;
    }
    return out;
  }

  /** The stored metadata of the entry under `key`, or undefined. */
  async metaOf(key: string): Promise<StoredMeta | undefined> {
    // The key itself sorts first among the keys it prefixes (`…:1` before `…:10`).
    for await (const m of this.#rows({ prefix: key, limit: 1 }))
      return m.key === key && m.kind === "entry" ? m : undefined;
    return undefined;
  }

  /**
   * A snapshot holding what an entry page shows around one entry: the
   * entry (read), its siblings of the same id and its parent's recordings
   * (metadata, by key prefix), and the runs that served it with the
   * entries they call (read: a retry of it is found there), among the
   * stored runs.
   */
  async around(key: string, entry: Entry): Promise<CatalogSnapshot> {
    const namespace = key.slice(0, key.indexOf(":"));
    const { runs } = await this.totals();
    const serving = runs
      .filter(
        (r) =>
          r.namespace === namespace &&
          r.calls.some((c) => c.id === entry.id && c.occurrence === entry.meta.occurrence),
      )
      .slice(0, RUNS_AROUND);
    const snap = await this.aroundRuns(serving);
    const byKey = new Map<string, EntrySummary>();
    const ids = [entry.id, ...(entry.meta.parent === undefined ? [] : [entry.meta.parent])];
    for (const id of ids)
      for await (const m of this.#rows({ prefix: `${namespace}:e:${id}:`, entriesOnly: true }))
        byKey.set(m.key, summaryOfMeta(m));
    // Read entries (parent links known) over metadata; the entry itself last.
    for (const [k, e] of snap.byKey) byKey.set(k, e);
    byKey.set(key, summarize(key, namespace, entry, byKey.get(key)?.bytes ?? 0, undefined));
    return { ...snap, entries: newestFirst([...byKey.values()]), byKey };
  }

  /**
   * A snapshot for a run page: the run record (read by key) and the
   * entries it calls (read one at a time: a run's few dozen, not the
   * store), with the other stored runs when counted. `snap` is undefined
   * when no such run is stored.
   */
  async aroundRun(namespace: string, runId: string): Promise<{ snap?: CatalogSnapshot }> {
    const snap = await this.aroundRuns([{ namespace, runId }]);
    return snap.runs.some((r) => r.namespace === namespace && r.runId === runId) ? { snap } : {};
  }

  /** {@link aroundRun} for the runs named (a compare page's two). */
  async aroundRuns(
    refs: ReadonlyArray<{ namespace: string; runId: string } | undefined>,
  ): Promise<CatalogSnapshot> {
    // The other stored runs (a run page offers to compare with them): counted once.
    const runs = new Map<string, RunRecord>();
    for (const r of (await this.totals()).runs) runs.set(r.key, r);
    const byKey = new Map<string, EntrySummary>();
    for (const ref of refs) {
      if (ref === undefined) continue;
      const key = `${ref.namespace}:run:${ref.runId}`;
      const value = await this.store.get(key);
      const run =
        value === undefined ? undefined : parseRun(key, ref.namespace, ref.runId, value, undefined);
      if (run === undefined) continue;
      runs.set(key, run);
      for (const c of run.calls) {
        const entryKey = `${run.namespace}:e:${c.id}:${c.occurrence}`;
        if (byKey.has(entryKey)) continue;
        const stored = await this.store.get(entryKey);
        if (stored === undefined) continue;
        try {
          const entry = validateEntry(stored, `${this.store.url} ${entryKey}`, { deep: false });
          byKey.set(
            entryKey,
            summarize(entryKey, run.namespace, entry, jsonBytes(stored), undefined),
          );
        } catch {
          // Unreadable: the step shows as not stored, as the full read shows it.
        }
      }
    }
    return {
      entries: newestFirst([...byKey.values()]),
      byKey,
      runs: [...runs.values()].sort((a, b) =>
        a.endedAt < b.endedAt ? 1 : a.endedAt > b.endedAt ? -1 : 0,
      ),
      cassettes: [],
      problems: [],
      readAt: Date.now(),
    };
  }
}

function newestFirst(entries: EntrySummary[]): EntrySummary[] {
  return entries.sort(
    (a, b) =>
      (a.recordedAt < b.recordedAt ? 1 : a.recordedAt > b.recordedAt ? -1 : 0) ||
      (a.key < b.key ? 1 : a.key > b.key ? -1 : 0),
  );
}

function jsonBytes(value: JsonValue): number {
  return JSON.stringify(value).length;
}
