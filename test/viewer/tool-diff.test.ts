/**
 * The viewer's diff of two tool calls reads through `explainIdentity`, the
 * function `invocache explain` prints (identity's kind table): the same
 * differing argument paths, not a field list of its own.
 */
import { describe, expect, it } from "vitest";
import { explainIdentity, manifestIdentity } from "../../src/identity/index.js";
import { toolManifest } from "../../src/index.js";
import type { Entry } from "../../src/store/index.js";
import { serverLinks } from "../../src/viewer/links.js";
import { diffView } from "../../src/viewer/views/diff.js";

function toolEntry(q: string, limit: number): { key: string; entry: Entry } {
  const manifest = toolManifest({
    kind: "tool",
    name: "search",
    server: "docs",
    args: { q, limit },
  });
  const id = manifestIdentity(manifest);
  return {
    key: `default:e:${id}:0`,
    entry: {
      v: 1,
      id,
      manifest,
      response: { hits: [] },
      meta: {
        recordedAt: "2026-01-01T00:00:00.000Z",
        durationMs: 1,
        invocacheVersion: "0.1.0",
        normalization: 1,
        occurrence: 0,
        attempt: 0,
      },
    } as Entry,
  };
}

describe("the viewer's diff of tool calls", () => {
  it("lists what explainIdentity lists: each differing argument path", () => {
    const a = toolEntry("retry", 5);
    const b = toolEntry("backoff", 5);
    const diffs = explainIdentity(a.entry.manifest, b.entry.manifest);
    expect(diffs.map((d) => d.summary)).toEqual(['args.q: "retry" → "backoff"']);
    const page = diffView(serverLinks(), a, b).toString();
    expect(page).toContain("≠ args</span>args.q: &quot;retry&quot; → &quot;backoff&quot;");
    // Not the viewer's former field list (tool, method, role…): only what differs.
    expect(page).not.toContain("≠ method");
    expect(page).not.toContain("≠ limit");
  });
});
