/**
 * A call's identity options over the recorder's defaults
 * (`identityOptionsOf`): the defaults themselves when the call gives none;
 * the call's own over them otherwise, the call-only keys left out; and the
 * same merged object again for a call that gives the same values (an
 * adapter's `attempt: 0` on every call), a fresh one as soon as one differs.
 */
import { describe, expect, it } from "vitest";
import type { IdentityOptions } from "../../src/identity/index.js";
import { identityOptionsOf, NO_OPTIONS } from "../../src/recorder/call-options.js";

describe("identityOptionsOf", () => {
  const defaults: IdentityOptions = { homeDir: "/p", attempt: 2 };

  it("answers the defaults when the call gives no identity option", () => {
    expect(identityOptionsOf(defaults, NO_OPTIONS)).toBe(defaults);
    expect(identityOptionsOf(defaults, { signal: new AbortController().signal })).toBe(defaults);
  });

  it("lays the call's identity options over the defaults, without its call-only keys", () => {
    const signal = new AbortController().signal;
    const merged = identityOptionsOf(defaults, { attempt: 0, signal, upstreamMs: 5 });
    expect(merged).toEqual({ homeDir: "/p", attempt: 0 });
    expect(defaults).toEqual({ homeDir: "/p", attempt: 2 });
  });

  it("gives the same object for the same values, a new one when a value differs", () => {
    const roots = ["/a"];
    const a = identityOptionsOf(defaults, { attempt: 0, tmpDirs: roots });
    const b = identityOptionsOf(defaults, { attempt: 0, tmpDirs: roots });
    expect(b).toBe(a);
    const c = identityOptionsOf(defaults, { attempt: 1, tmpDirs: roots });
    expect(c).not.toBe(a);
    expect(c).toEqual({ homeDir: "/p", attempt: 1, tmpDirs: roots });
    // Another array of the same roots is another value: merged afresh (never a stale object).
    const d = identityOptionsOf(defaults, { attempt: 1, tmpDirs: ["/a"] });
    expect(d).not.toBe(c);
    expect(d.tmpDirs).not.toBe(roots);
    // Other defaults: their own merge.
    const other: IdentityOptions = { homeDir: "/q" };
    expect(identityOptionsOf(other, { attempt: 1, tmpDirs: roots })).toEqual({
      homeDir: "/q",
      attempt: 1,
      tmpDirs: roots,
    });
  });
});
