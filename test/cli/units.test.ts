/**
 * The CLI's small pieces, in process: colors, tables, the progress bar, typo
 * suggestions.
 */
import { describe, expect, it } from "vitest";
import { closest, sizeOption } from "../../src/cli/args.js";
import { optionsFromHelp } from "../../src/cli/completion.js";
import { formatBytes, formatMs, renderTable } from "../../src/cli/format.js";
import { type Io, makeStyle, useColor } from "../../src/cli/io.js";
import { packageVersion } from "../../src/cli/package-version.js";
import { progress } from "../../src/cli/progress.js";
import { INVOCACHE_VERSION } from "../../src/version.js";

function fakeIo(stderrTTY: boolean): Io & { errText: () => string } {
  let err = "";
  return {
    env: {},
    cwd: "/",
    out() {},
    err(text) {
      err += text;
    },
    style: makeStyle(false),
    errStyle: makeStyle(false),
    stderrTTY,
    columns: 80,
    stdin: async () => Buffer.alloc(0),
    errText: () => err,
  };
}

describe("useColor", () => {
  it("follows the terminal, NO_COLOR and FORCE_COLOR", () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
    expect(useColor({ isTTY: true }, { FORCE_COLOR: "0" })).toBe(false);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(false);
  });

  it("a disabled style leaves text alone", () => {
    expect(makeStyle(false).red("x")).toBe("x");
    expect(makeStyle(true).red("x")).toBe("\x1b[31mx\x1b[39m");
  });
});

describe("renderTable", () => {
  it("pads columns to the widest cell, ignoring color codes", () => {
    const red = makeStyle(true).red;
    expect(
      renderTable(
        ["id", "hits"],
        [
          ["3f2a9c0d1b7e", "2"],
          [red("ab"), "10"],
        ],
        {
          align: ["left", "right"],
        },
      ),
    ).toBe(`id            hits\n3f2a9c0d1b7e     2\n${red("ab")}              10\n`);
  });
});

describe("formatters", () => {
  it("durations and sizes", () => {
    expect(formatMs(0.42)).toBe("0.4 ms");
    expect(formatMs(312.4)).toBe("312 ms");
    expect(formatMs(1432.6)).toBe("1.43 s");
    expect(formatBytes(812)).toBe("812 B");
    expect(formatBytes(3481)).toBe("3.4 KiB");
  });
});

describe("progress", () => {
  it("draws nothing when stderr is not a terminal", () => {
    const io = fakeIo(false);
    const bar = progress(io, "pruning", 10, () => 10_000);
    bar.tick(5);
    bar.done();
    expect(io.errText()).toBe("");
  });

  it("on a terminal: nothing for short operations, then a bar, then erased", () => {
    const io = fakeIo(true);
    let now = 0;
    const bar = progress(io, "pruning", 4, () => now);
    bar.tick();
    expect(io.errText()).toBe(""); // under 250 ms: not worth a bar
    now = 400;
    bar.tick();
    expect(io.errText()).toBe(`\r\x1b[Kpruning [${"█".repeat(12)}${"░".repeat(12)}] 2/4`);
    now = 420;
    bar.tick(); // redraws are throttled
    expect(io.errText()).not.toMatch(/3\/4/);
    bar.done();
    expect(io.errText().endsWith("\r\x1b[K")).toBe(true);
  });

  it("counts when the total is unknown", () => {
    const io = fakeIo(true);
    let now = 0;
    const bar = progress(io, "reading", undefined, () => now);
    now = 1000;
    bar.tick(3);
    expect(io.errText()).toBe("\r\x1b[Kreading… 3");
  });
});

describe("closest", () => {
  it("suggests near misses only", () => {
    expect(closest("lss", ["ls", "show"])).toBe("ls");
    expect(closest("stor", ["store", "cassette"])).toBe("store");
    expect(closest("frobnicate", ["ls", "show"])).toBeUndefined();
  });
});

describe("sizeOption", () => {
  it("reads plain bytes and binary/decimal units, refuses anything else naming the option", () => {
    expect(sizeOption("max-bytes", "1048576")).toBe(1048576);
    expect(sizeOption("max-bytes", "64MiB")).toBe(64 * 1024 * 1024);
    expect(sizeOption("max-bytes", "1GB")).toBe(1e9);
    expect(sizeOption("max-bytes", "4k")).toBe(4096);
    for (const bad of ["", "0", "-1", "lots", "12 parsecs", "1e9"]) {
      expect(() => sizeOption("max-bytes", bad)).toThrow(/--max-bytes must be a size/);
    }
  });
});

describe("optionsFromHelp", () => {
  it("finds long and short options, whether they take a value, and the description", () => {
    const help = `Usage: x

Options:
  --store URL        a store URL
  -n, --dry-run      change nothing
  --tmp DIR          a temporary directory; repeatable
  --json             JSON
`;
    expect(optionsFromHelp(help)).toEqual([
      { long: "store", value: true, description: "a store URL" },
      { long: "dry-run", short: "n", value: false, description: "change nothing" },
      { long: "tmp", value: true, description: "a temporary directory; repeatable" },
      { long: "json", value: false, description: "JSON" },
      { long: "help", short: "h", value: false, description: "help" },
    ]);
  });
});

describe("packageVersion", () => {
  it("is the built-in version when no invocache package.json is above the module", () => {
    expect(packageVersion("/")).toBe(INVOCACHE_VERSION);
  });
});
