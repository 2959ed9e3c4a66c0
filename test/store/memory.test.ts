import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import { storeConformance } from "../../src/testing/store-conformance.js";

storeConformance("memory://", () => openStore("memory://"));

describe("memory://", () => {
  it("is private to each openStore call", async () => {
    const a = openStore("memory://");
    const b = openStore("memory://");
    await a.set("k", 1);
    expect(await b.get("k")).toBeUndefined();
    await Promise.all([a.close(), b.close()]);
  });
});
