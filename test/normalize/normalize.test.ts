import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  explainNormalization,
  NORMALIZATION_RULES,
  type NormalizeOptions,
  normalizePrompt,
  refreshSecretEnv,
} from "../../src/normalize/index.js";
import { tempDir } from "../helpers/tmp.js";

// Machine-independent defaults for every case below.
const base: NormalizeOptions = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const n = (text: string, opts: NormalizeOptions = {}) =>
  normalizePrompt(text, { ...base, ...opts });

describe("rule table", () => {
  it("is exported as frozen data with names, replacements and examples", () => {
    expect(Object.isFrozen(NORMALIZATION_RULES)).toBe(true);
    expect(NORMALIZATION_RULES.map((r) => r.name)).toEqual([
      "unicode-nfc",
      "whitespace",
      "secret",
      "root:project",
      "root:tmp",
      "root:home",
      "root:<name>",
      "timestamp",
      "uuid",
      "epoch-millis",
    ]);
    for (const r of NORMALIZATION_RULES) {
      expect(r.example, r.name).toBeDefined();
      expect(r.description, r.name).toBeTruthy();
    }
  });
});

describe("unicode-nfc", () => {
  it("composes decomposed characters", () => {
    expect(n("cafe\u0301")).toBe("café");
    expect(n("cafe\u0301")).toBe(n("caf\u00e9"));
  });
});

describe("whitespace", () => {
  it("collapses every run (spaces, tabs, CR, LF, unicode spaces) and trims", () => {
    expect(n("  a \t\r\n b\u00a0\u2028c\n")).toBe("a b c");
    expect(n("a b")).toBe("a b");
    expect(n("\n\n")).toBe("");
    expect(n("")).toBe("");
  });
  it("keeps non-whitespace invisible characters (zero-width joiner is content)", () => {
    expect(n("a\u200db")).toBe("a\u200db");
  });
});

describe("secret", () => {
  const env = {
    OPENAI_API_KEY: "sk-live-Zq9Xv8Wu7Ts6Rq5Po4Nm3Lk2",
    SERVICE_TOKEN: "t0k3n/abc+def=12345",
  };
  const opts = { secrets: { env } };
  it("replaces env secret values in every spelling, and known key shapes, before other rules", () => {
    expect(n(`key ${env.OPENAI_API_KEY} and ${encodeURIComponent(env.SERVICE_TOKEN)}`, opts)).toBe(
      "key {secret:OPENAI_API_KEY} and {secret:SERVICE_TOKEN:url}",
    );
    // base64 is redacted on its aligned part; at most the final padding quantum stays.
    expect(n(`b64 ${Buffer.from(env.SERVICE_TOKEN).toString("base64")}`, opts)).toMatch(
      /^b64 \{secret:SERVICE_TOKEN:b64-\d\}.{0,4}$/,
    );
    expect(n("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", opts)).toBe(
      "gh {secret:github-token}",
    );
    // A key that contains a UUID is removed whole, not cut by the uuid rule.
    expect(n("sk-proj-3f2504e0-4f89-11d3-9a0c-0305e82c3301-x9", opts)).toBe(
      "{secret:openai-api-key}",
    );
  });
  it("makes the identity independent of which key was used", () => {
    const a = n("Authorization: Bearer abcdef0123456789abcdef", { secrets: {} });
    const b = n("Authorization: Bearer 9876543210fedcba987654", { secrets: {} });
    expect(a).toBe(b);
    expect(a).not.toContain("abcdef0123456789");
  });
  it("reads process.env by default, again after refreshSecretEnv()", () => {
    const value = "v4lue-Zq9Xv8Wu7Ts6Rq5P";
    const text = `use ${value}`;
    process.env.INVOCACHE_TEST_API_KEY = value;
    try {
      refreshSecretEnv();
      expect(normalizePrompt(text, base)).toBe("use {secret:INVOCACHE_TEST_API_KEY}");
    } finally {
      delete process.env.INVOCACHE_TEST_API_KEY;
      refreshSecretEnv();
    }
    expect(normalizePrompt(text, base)).toBe(text);
  });
  it("can be turned off", () => {
    expect(n(`k ${env.OPENAI_API_KEY}`, { secrets: false })).toBe(`k ${env.OPENAI_API_KEY}`);
  });
  it("is idempotent", () => {
    const once = n(`key ${env.OPENAI_API_KEY} Bearer abcdef0123456789abcdef`, opts);
    expect(n(once, opts)).toBe(once);
  });
});

describe("roots", () => {
  it("templates the project path and keeps the subpath", () => {
    expect(n("edit /work/run-7/src/a.ts", { projectPath: "/work/run-7" })).toBe(
      "edit {project}/src/a.ts",
    );
    expect(n("/work/run-7", { projectPath: "/work/run-7/" })).toBe("{project}");
  });
  it("matches the project path as given and resolved", () => {
    const o = { projectPath: "/srv/foo/../bar" };
    expect(n("a /srv/foo/../bar/x b /srv/bar/y", o)).toBe("a {project}/x b {project}/y");
  });
  it("templates home and tmp", () => {
    expect(n("read /home/u/.npmrc and /tmp/x.json")).toBe("read {home}/.npmrc and {tmp}/x.json");
  });
  it("only matches on path boundaries", () => {
    expect(n("/home/u2/x /home/u-old /home/u_x /home/u.bak /home/uñ /x/home/u/y")).toBe(
      "/home/u2/x /home/u-old /home/u_x /home/u.bak /home/uñ /x/home/u/y",
    );
    expect(n("(/home/u) '/home/u' \"/home/u/a\" /home/u: /home/u, end /home/u.")).toBe(
      "({home}) '{home}' \"{home}/a\" {home}: {home}, end {home}.",
    );
    expect(n("PATH=/usr/bin:/home/u/bin")).toBe("PATH=/usr/bin:{home}/bin");
    expect(n("see file:///home/u/a and http://host/home/u/a")).toBe(
      "see file://{home}/a and http://host/home/u/a",
    );
  });
  it("picks the longest spelling: project inside home inside tmp", () => {
    const o = { tmpDirs: ["/tmp"], homeDir: "/tmp/h", projectPath: "/tmp/h/p" };
    expect(n("/tmp/h/p/a /tmp/h/b /tmp/c /tmp/h/pp", o)).toBe(
      "{project}/a {home}/b {tmp}/c {home}/pp",
    );
  });
  it("falls back to a shorter root when the longer one is not on a boundary", () => {
    expect(n("/home/u/proj2/x", { projectPath: "/home/u/proj" })).toBe("{home}/proj2/x");
  });
  it("gives project priority when two roots are the same path", () => {
    expect(n("/home/u/a", { projectPath: "/home/u" })).toBe("{project}/a");
  });
  it("templates Windows paths in backslash, slash and JSON-escaped spellings, ASCII case-folded", () => {
    const o = { projectPath: "C:\\Users\\Me\\proj" };
    expect(n("C:\\Users\\Me\\proj\\a.ts", o)).toBe("{project}\\a.ts");
    expect(n("c:/users/me/proj/a.ts", o)).toBe("{project}/a.ts");
    expect(n('{"p":"C:\\\\Users\\\\Me\\\\proj\\\\b.ts"}', o)).toBe('{"p":"{project}\\\\b.ts"}');
    expect(n("C:\\Users\\Me\\project\\a.ts", o)).toBe("C:\\Users\\Me\\project\\a.ts");
    expect(n("file:///C:/Users/Me/proj/x", o)).toBe("file:///{project}/x");
  });
  it("puts root spellings through NFC and whitespace collapse, like the text", () => {
    expect(n("edit /work/cafe\u0301/x", { projectPath: "/work/cafe\u0301" })).toBe(
      "edit {project}/x",
    );
    expect(n("edit /work/café/x", { projectPath: "/work/cafe\u0301" })).toBe("edit {project}/x");
    expect(n("cd /work/my  proj/x", { projectPath: "/work/my  proj" })).toBe("cd {project}/x");
  });
  it("templates extra named roots", () => {
    expect(n("in /var/cache/ci/x", { roots: { cache: "/var/cache/ci" } })).toBe("in {cache}/x");
  });
  it("refuses a root of /, empty or a bare drive, naming the option", () => {
    expect(() => n("x", { projectPath: "/" })).toThrow(/projectPath "\/" is the filesystem root/);
    expect(() => n("x", { projectPath: "" })).toThrow(RangeError);
    expect(() => n("x", { projectPath: "C:\\" })).toThrow(/bare drive/);
    expect(() => n("x", { homeDir: "//" })).toThrow(/homeDir/);
    expect(() => n("x", { roots: { cache: "/" } })).toThrow(/roots\.cache/);
    expect(() => n("x", { roots: { home: "/x" } })).toThrow(/not a usable root name/);
    expect(() => n("x", { roots: { "a b": "/x" } })).toThrow(TypeError);
  });
  it("rejects non-string roots with a TypeError naming the field", () => {
    expect(() => n("x", { projectPath: 3 as unknown as string })).toThrow(
      /projectPath must be a string/,
    );
    expect(() => n("x", { tmpDirs: [null as unknown as string] })).toThrow(/tmpDirs\[0\]/);
  });

  describe("on the real filesystem", () => {
    const dir = realpathSync(tempDir("roots"));

    it("templates the real path of a symlinked project (the macOS /private/var case)", () => {
      const real = join(dir, "real-project");
      const link = join(dir, "link");
      mkdirSync(real);
      symlinkSync(real, link);
      const o = { projectPath: link, tmpDirs: [] };
      expect(n(`a ${link}/x b ${real}/y`, o)).toBe("a {project}/x b {project}/y");
    });
    it("templates the default os.tmpdir() and /tmp", () => {
      expect(normalizePrompt(`x ${tmpdir()}/a /tmp/b`, { homeDir: "/home/u" })).toBe(
        "x {tmp}/a {tmp}/b",
      );
    });
    it("adds the macOS /private forms of tmp roots", () => {
      expect(
        n("/private/tmp/a /private/var/folders/x/T/b", { tmpDirs: ["/tmp", "/var/folders/x/T"] }),
      ).toBe("{tmp}/a {tmp}/b");
    });
  });
});

describe("uuid", () => {
  it("templates dashed UUIDs in any case and 32-hex ids", () => {
    expect(n("a 3F2504E0-4F89-11D3-9A0C-0305E82C3301 b 3f2504e0-4f89-11d3-9a0c-0305e82c3301")).toBe(
      "a {uuid} b {uuid}",
    );
    expect(n("req_3f2504e04f8911d39a0c0305e82c3301.json")).toBe("req_{uuid}.json");
  });
  it("keeps 40-hex git shas, 64-hex digests and hex inside longer words", () => {
    const sha1 = "3f2504e04f8911d39a0c0305e82c33013f2504e0";
    const sha256 = "a".repeat(64);
    expect(n(`commit ${sha1} digest ${sha256}`)).toBe(`commit ${sha1} digest ${sha256}`);
    expect(n("x3f2504e0-4f89-11d3-9a0c-0305e82c3301")).toBe(
      "x3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    );
    expect(n("3f2504e0-4f89-11d3-9a0c-0305e82c33010")).toBe(
      "3f2504e0-4f89-11d3-9a0c-0305e82c33010",
    );
    expect(n("3f2504e0-4f89-11d3-9a0c-0305e82c330")).toBe("3f2504e0-4f89-11d3-9a0c-0305e82c330");
    expect(n("3f2504e04f8911d39a0c0305e82c330")).toBe("3f2504e04f8911d39a0c0305e82c330");
  });
});

describe("timestamp", () => {
  it.each([
    ["2026-09-09T14:33:21+00:00"],
    ["2026-09-09T14:33:21Z"],
    ["2026-09-09 14:33:21"],
    ["2026-09-09T14:33"],
    ["2026-09-09T14:33:21.123456Z"],
    ["2026-09-09t14:33:21,5+0530"],
    ["2026-09-09T14:33:21-07"],
  ])("templates %s", (ts) => {
    expect(n(`at ${ts} ok`)).toBe("at {timestamp} ok");
  });
  it("joins a date and time split by any whitespace (collapsed first)", () => {
    expect(n("2026-09-09\n\t14:33:21")).toBe("{timestamp}");
  });
  it("keeps dates alone, impossible fields and digit-glued text", () => {
    expect(n("due 2026-09-09.")).toBe("due 2026-09-09.");
    expect(n("2026-13-09T14:33 2026-09-32T14:33 2026-09-09T25:00 2026-09-09T14:60")).toBe(
      "2026-13-09T14:33 2026-09-32T14:33 2026-09-09T25:00 2026-09-09T14:60",
    );
    expect(n("12026-09-09T14:33")).toBe("12026-09-09T14:33");
  });
  it("keeps a datetime with trailing digits whole rather than leaving a fragment", () => {
    expect(n("2026-09-09T14:33:217")).toBe("2026-09-09T14:33:217");
  });
  it("templates 13-digit epoch millis and keeps 10-digit seconds and other numbers", () => {
    expect(n("ts=1767225600000 s=1767225600 n=42 big=17672256000001 hex=1767225600000abc")).toBe(
      "ts={timestamp} s=1767225600 n=42 big=17672256000001 hex=1767225600000abc",
    );
  });
});

describe("everything else is kept", () => {
  it("keeps unknown absolute paths, numbers, code and instructions", () => {
    const text =
      "Read /etc/hosts, then run `rm -rf ./build` 3 times; version 1.2.3; port 8080; {project} literal";
    expect(n(text)).toBe(text);
  });
  it("never throws on lone surrogates and keeps them", () => {
    expect(n("x\ud800 y\udc00")).toBe("x\ud800 y\udc00");
  });
});

describe("custom rules", () => {
  it("appends caller rules after the table", () => {
    const rules = [{ name: "ticket", pattern: /JIRA-\d+/, replacement: "{ticket}" }];
    expect(n("fix JIRA-123 and JIRA-9", { rules })).toBe("fix {ticket} and {ticket}");
  });
  it("rejects a rule without a RegExp, naming its index", () => {
    expect(() => n("x", { rules: [{ name: "r", replacement: "y" }] })).toThrow(
      /rules\[0\]\.pattern must be a RegExp/,
    );
  });
});

describe("explainNormalization", () => {
  it("reports which rules fired where", () => {
    const r = explainNormalization("at  2026-09-09T10:00:00Z in /home/u/a", base);
    expect(r.output).toBe("at {timestamp} in {home}/a");
    expect(r.counts).toEqual({ whitespace: 1, timestamp: 1, "root:home": 1 });
    expect(r.matches.map((m) => [m.rule, m.text])).toEqual([
      ["timestamp", "2026-09-09T10:00:00Z"],
      ["root:home", "/home/u"],
    ]);
  });
});

describe("bad arguments", () => {
  it("rejects non-string text with a TypeError", () => {
    expect(() => normalizePrompt(undefined as unknown as string)).toThrow(TypeError);
  });
});
