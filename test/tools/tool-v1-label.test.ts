/**
 * Entries recorded under recipe tool v1 stay readable (ls, show, the viewer)
 * and say they need a re-record; v2 entries are labelled as before.
 */
import { describe, expect, it } from "vitest";
import { modelLabel } from "../../src/cli/manifest-label.js";
import { toolManifest, toolManifestV1 } from "../../src/identity/tool-manifest.js";
import { toolLabel, toolOf } from "../../src/viewer/catalog.js";

const req = { kind: "tool", name: "read", server: "fs", args: { path: "a" } } as const;

describe("tool v1 entries are shown as needing a re-record", () => {
  it("CLI label (ls/show)", () => {
    expect(modelLabel(toolManifestV1(req))).toBe("tool(v1, re-record) fs/read");
    expect(modelLabel(toolManifest(req))).toBe("tool fs/read");
  });
  it("viewer label", () => {
    const v1 = toolOf(toolManifestV1(req) as never);
    const v2 = toolOf(toolManifest(req) as never);
    expect(toolLabel(v1 as never)).toBe("fs/read (tool v1, re-record)");
    expect(toolLabel(v2 as never)).toBe("fs/read");
  });
});
