/**
 * What `invocache demo --json` prints: the setting, both runs, the key, each
 * stamp's verification, what run 2 saved and the price table used
 * (docs/cli.md, `invocache demo`).
 */
import { relative } from "node:path";
import type { VerifyReport } from "../../provenance/index.js";
import { PRICE_SNAPSHOT } from "../../usage/index.js";
import { verifyRow } from "../verify-reports.js";
import type { DemoRun } from "./runs.js";
import type { DemoKey } from "./setup.js";

/**
 * The demo's `--json` document.
 *
 * @example
 * printJson(io, demoJson({ ok, storeUrl: store.url, namespace, cleared, modelUrl, shownOut, cwd, demoKey, runs, reports }));
 */
export function demoJson(d: {
  ok: boolean;
  storeUrl: string;
  namespace: string;
  cleared: number;
  modelUrl: string;
  shownOut: string;
  cwd: string;
  demoKey: DemoKey;
  runs: readonly DemoRun[];
  reports: readonly VerifyReport[];
}): Record<string, unknown> {
  const second = d.runs[1]!;
  return {
    ok: d.ok,
    store: d.storeUrl,
    namespace: d.namespace,
    cleared: d.cleared,
    model: d.modelUrl,
    outDir: d.shownOut,
    runs: d.runs,
    key: {
      keyid: d.demoKey.key.keyid,
      privateKey: relative(d.cwd, d.demoKey.privateKeyPath),
      publicKey: relative(d.cwd, d.demoKey.publicKeyPath),
      generated: d.demoKey.generated,
    },
    stamps: d.reports.map(verifyRow),
    savedMs: second.savedMs,
    saved: second.saved,
    prices: PRICE_SNAPSHOT,
  };
}
