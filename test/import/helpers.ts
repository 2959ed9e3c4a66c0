/** Shared setup for the import suites: a temp cassette to import into, and replay through createFetch with no upstream. */
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createFetch } from "../../src/adapters/index.js";
import { cassetteStore } from "../../src/cassette/index.js";
import { type ImportReport, importFiles, readImportFile } from "../../src/import/index.js";
import { createRecorder, type Recorder } from "../../src/index.js";
import { tempDir } from "../helpers/tmp.js";

/** A temp folder with a cassette path in it. */
export function importSandbox(name: string) {
  const dir = tempDir(`import-${name}`);
  const cassette = join(dir, "imported.yaml");
  const recorders: Recorder[] = [];
  return {
    dir,
    cassette,
    /** The sandbox cassette's bytes ("" before the first write). */
    text: () => (existsSync(cassette) ? readFileSync(cassette, "utf8") : ""),
    /** Import `files` into the sandbox cassette. */
    async importInto(
      files: string[],
      options: { dryRun?: boolean; env?: Record<string, string> } = {},
    ): Promise<ImportReport> {
      const store = cassetteStore(cassette);
      try {
        return await importFiles(
          files.map((f) => readImportFile(f)),
          {
            store,
            env: options.env ?? {},
            ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
          },
        );
      } finally {
        await store.close();
      }
    },
    /**
     * A fetch that replays from the sandbox cassette and fails the test if it
     * ever reaches upstream; `upstreamCalls()` says how many tried.
     */
    replayFetch(env: Record<string, string> = {}) {
      const recorder = createRecorder({ store: cassetteStore(cassette), mode: "replay", env });
      recorders.push(recorder);
      let calls = 0;
      const fetch = createFetch({
        recorder,
        onMiss: "throw",
        fetch: async () => {
          calls++;
          throw new Error("upstream called during replay");
        },
      });
      return { fetch, recorder, upstreamCalls: () => calls };
    },
    /**
     * Send every request `report` imported again, as recorded, through
     * {@link replayFetch}: the answers, parsed (JSON) or as text (a stream).
     */
    async replayImported(report: ImportReport, env: Record<string, string> = {}) {
      const replay = this.replayFetch(env);
      const answers: Array<{ status: number; type: string | null; body: unknown }> = [];
      for (const item of report.items.filter((i) => i.outcome === "imported")) {
        const exchange = readImportFile(item.file).translated.exchanges.find(
          (x) => x.where === item.where,
        );
        if (exchange === undefined) throw new Error(`no exchange at ${item.where}`);
        const headers = new Headers({ "content-type": "application/json" });
        const res = await replay.fetch(exchange.request.url, {
          method: exchange.request.method,
          headers,
          body: exchange.request.body ?? null,
        });
        const type = res.headers.get("content-type");
        const text = await res.text();
        answers.push({
          status: res.status,
          type,
          body: type?.startsWith("application/json") ? JSON.parse(text) : text,
        });
      }
      return { answers, upstreamCalls: replay.upstreamCalls(), stats: replay.recorder.stats };
    },
    async cleanup() {
      for (const r of recorders.splice(0)) await r.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
