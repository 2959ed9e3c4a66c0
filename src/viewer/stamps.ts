/**
 * Stamps that reference an entry. Provenance stamps live beside their
 * artifacts (`<artifact>.intoto.jsonl`, docs/provenance.md), not in the
 * store, so the viewer looks for them under one folder: by default the one
 * that holds the SQLite file or the cassettes (the demo writes its
 * artifacts there), or `--stamps DIR`. Each stamp file is read with
 * `verifyStamp` (the same check `invocache verify` prints, without a
 * trusted key) and indexed by the identity each stamp names.
 *
 * Bounded: at most {@link MAX_STAMP_FILES} stamp files, {@link MAX_DEPTH}
 * folders deep, skipping node_modules; the index is
 * rebuilt at most every `refreshMs`.
 *
 * Dot-folders are skipped except `.invocache` (so a store at
 * `.invocache/cache.sqlite` or a project folder both find the demo's stamps).
 */
import { readdir } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { STAMP_SUFFIX, verifyStamp } from "../provenance/index.js";
import type { CatalogLocation } from "./catalog.js";
import { missLogPath } from "./miss-log.js";

export const MAX_STAMP_FILES = 2000;
const MAX_DEPTH = 5;

/** Where stamps are looked for by default: the folder of the SQLite file (or `.invocache`), or the cassette folder. */
export function defaultStampRoot(location: CatalogLocation, url: string): string {
  // The miss log sits one folder below exactly that place.
  const log = missLogPath("store" in location ? { store: url } : { cassette: location.cassette });
  return dirname(dirname(log));
}

/** One stamp that names an identity. */
export interface StampRef {
  /** The artifact, relative to the searched folder, with `/`. */
  artifact: string;
  /** 1-based line in the stamp file. */
  line: number;
  /** Written by a replayed call (`invocache_replayed`). */
  replayed: boolean;
  signed: boolean;
  /** keyids of the signatures. */
  keyids: string[];
  /** The artifact matches its stamp and the stamp is well formed (signatures not checked against a trusted key). */
  ok: boolean;
  problems: string[];
}

/** Stamps under a folder, by the identity they reference. */
export class StampIndex {
  #built: { at: number; byId: Map<string, StampRef[]>; files: number } | undefined;
  #loading: Promise<Map<string, StampRef[]>> | undefined;

  constructor(
    readonly root: string,
    readonly refreshMs = 3000,
  ) {}

  /** The stamps that reference `id`, artifact by artifact. */
  async referencing(id: string): Promise<StampRef[]> {
    return (await this.#index()).get(id) ?? [];
  }

  async #index(): Promise<Map<string, StampRef[]>> {
    const b = this.#built;
    if (b !== undefined && Date.now() - b.at <= this.refreshMs) return b.byId;
    if (this.#loading === undefined) {
      this.#loading = this.#build().finally(() => {
        this.#loading = undefined;
      });
    }
    return this.#loading;
  }

  async #build(): Promise<Map<string, StampRef[]>> {
    const files = await stampFiles(this.root);
    const byId = new Map<string, StampRef[]>();
    for (const file of files) {
      const artifact = file.slice(0, -STAMP_SUFFIX.length);
      const report = await verifyStamp(artifact, { foreign: "ignore" }).catch(() => undefined);
      if (report === undefined) continue;
      const shown = relative(this.root, artifact).split(sep).join("/");
      for (const s of report.stamps) {
        if (s.id === undefined) continue;
        const ref: StampRef = {
          artifact: shown,
          line: s.line,
          replayed: s.replayed === true,
          signed: s.signed,
          keyids: s.signatures.flatMap((g) => (g.keyid === "" ? [] : [g.keyid])),
          ok: s.ok && report.digest !== undefined,
          problems: s.problems,
        };
        const list = byId.get(s.id);
        if (list === undefined) byId.set(s.id, [ref]);
        else list.push(ref);
      }
    }
    this.#built = { at: Date.now(), byId, files: files.length };
    return byId;
  }
}

async function stampFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || out.length >= MAX_STAMP_FILES) return;
    const list = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of list) {
      if (out.length >= MAX_STAMP_FILES) return;
      // `.invocache` is where invocache writes (the demo's artifacts and stamps); other dot-folders are not ours.
      if ((e.name.startsWith(".") && e.name !== ".invocache") || e.name === "node_modules")
        continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p, depth + 1);
      else if (e.isFile() && e.name.endsWith(STAMP_SUFFIX)) out.push(p);
    }
  };
  await walk(root, 0);
  return out.sort();
}
