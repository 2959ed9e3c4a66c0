/**
 * Regression tests for different questions that used to normalize to the
 * same text (so share an identity, so be served each other's answers):
 * 13-digit numbers that are not epoch millis, 32-hex tokens that are not
 * UUIDs, indentation inside fenced code, and datetimes with impossible fields
 * or a half-parsed zone. Each pair below must stay apart.
 */
import { describe, expect, it } from "vitest";
import {
  explainNormalization,
  type NormalizeOptions,
  normalizePrompt,
} from "../../src/normalize/index.js";

const base: NormalizeOptions = { homeDir: "/home/u", tmpDirs: ["/tmp"] };
const n = (text: string, opts: NormalizeOptions = {}) =>
  normalizePrompt(text, { ...base, ...opts });

describe("epoch-millis: only a standalone 13-digit number in the documented window", () => {
  it.each([
    ["ISBN-13", "9780262033848", "9780131103627"],
    ["EAN-13", "4006381333931", "5901234123457"],
    ["E.164 phone number", "+4915112345678", "+4915198765432"],
    ["E.164 phone number in the window", "+1234567890123", "+1234567890124"],
    ["13 decimal places", "0.1234567890123", "0.9999999999999"],
    ["13 decimal places in the window", "0.1767225600000", "0.1767225600001"],
    ["hex literal", "0x1234567890123", "0x1234567890124"],
  ])("%s is kept (%s vs %s)", (_what, a, b) => {
    expect(n(`look up ${a}`)).toBe(`look up ${a}`);
    expect(n(`look up ${b}`)).toBe(`look up ${b}`);
  });

  it("still templates epoch millis, in volatile names too", () => {
    expect(n("run-1757428401123 ts=1767225600000 (1000000000000) 3999999999999")).toBe(
      "run-{timestamp} ts={timestamp} ({timestamp}) {timestamp}",
    );
  });

  it("keeps 13-digit numbers outside 2001-09-09 .. 2096-10-02", () => {
    expect(n("a 0999999999999 b 4000000000000 c 4102444800000")).toBe(
      "a 0999999999999 b 4000000000000 c 4102444800000",
    );
  });
});

describe("uuid: a bare 32-hex token only with RFC 9562 version and variant", () => {
  it.each([
    ["MD5 of the empty string", "d41d8cd98f00b204e9800998ecf8427e"],
    ["MD5 of 'abc'", "900150983cd24fb0d6963f7d28e17f72"],
    ["AES-128 key (FIPS-197 C.1)", "000102030405060708090a0b0c0d0e0f"],
    ["32-digit integer", "12345678901241238123456789012345"],
    ["version 0", "3f2504e04f8901d39a0c0305e82c3301"],
    ["version 9", "3f2504e04f8991d39a0c0305e82c3301"],
    ["variant 0xxx (NCS)", "3f2504e04f8911d37a0c0305e82c3301"],
    ["variant 110x (Microsoft)", "3f2504e04f8911d3ca0c0305e82c3301"],
  ])("%s is kept: %s", (_what, hex) => {
    expect(n(`digest ${hex}`)).toBe(`digest ${hex}`);
  });

  it("templates bare UUIDs of versions 1-8 with variant 10xx, any case", () => {
    expect(
      n(
        "3f2504e04f8911d39a0c0305e82c3301 0190F3A2B7C47D8E9F1A2B3C4D5E6F70 " +
          "1b4e28ba2fa141d2883f0016d3cca427 1EC9414C232A6B00B3C89F6BDECED846",
      ),
    ).toBe("{uuid} {uuid} {uuid} {uuid}");
  });

  it("templates dashed UUIDs of any version and variant, as before", () => {
    expect(n("3f2504e0-4f89-01d3-7a0c-0305e82c3301 00000000-0000-0000-0000-000000000000")).toBe(
      "{uuid} {uuid}",
    );
  });
});

describe("whitespace inside fenced code blocks", () => {
  const loop = (body: string) => `Review this:\n\n\`\`\`python\nfor x in xs:\n${body}\n\`\`\`\n`;
  const inside = loop("    total += x\n    print(total)");
  const after = loop("    total += x\nprint(total)");

  it("keeps indentation, so two programs differing only in it stay apart", () => {
    expect(n(inside)).not.toBe(n(after));
    expect(n(inside)).toBe(
      "Review this:\n```python\nfor x in xs:\n    total += x\n    print(total)\n```",
    );
  });

  it("keeps line structure with ~~~ fences and longer fences", () => {
    expect(n("a  b\n~~~\nx\n  y\n~~~\n  c   d")).toBe("a b\n~~~\nx\n  y\n~~~\nc d");
    expect(n("````\n```\n  inner\n````\nend")).toBe("````\n```\n  inner\n````\nend");
  });

  it("normalizes line endings and trailing blanks inside the fence", () => {
    expect(n("```\r\nif a:\r\n\tb()   \r\n```")).toBe("```\nif a:\n\tb()\n```");
  });

  it("runs an unclosed fence to the end of the text, as CommonMark does", () => {
    expect(n("see\n```\n  x\n\n  y  \n")).toBe("see\n```\n  x\n\n  y");
  });

  it("collapses whitespace outside fences and in inline backticks", () => {
    expect(n("run  `a   b`  then ```x   y```")).toBe("run `a b` then ```x y```");
    expect(n("``` a `b`\n  c")).toBe("``` a `b` c");
  });

  it("accepts a fence marker after any indentation, so collapsing never creates one", () => {
    expect(n("text\n    ```\n  code\n    ```")).toBe("text\n    ```\n  code\n    ```");
  });

  it("still applies the other rules inside a fence", () => {
    expect(n("```\n  at 2026-09-09T10:00:00Z in /home/u/x\n```")).toBe(
      "```\n  at {timestamp} in {home}/x\n```",
    );
  });

  it("is idempotent on fenced text", () => {
    for (const t of [inside, after, "x\n   ```js\n  a\n   ```\n\n\n y", "```\n\n```\n```\nb"]) {
      const once = n(t);
      expect(n(once)).toBe(once);
    }
  });
});

describe("timestamp: field ranges are checked and nothing is left behind", () => {
  it.each([
    ["February 30", "2026-02-30T10:00:00Z"],
    ["February 29 in a common year", "2026-02-29T10:00:00Z"],
    ["February 29 in 1900", "1900-02-29T10:00:00Z"],
    ["April 31", "2026-04-31T10:00"],
    ["hour 24", "2026-09-09T24:00"],
    ["hour 24:59", "2026-09-09 24:59"],
    ["second 61", "2026-09-09T10:00:61Z"],
    ["offset minutes 60", "2026-09-09T10:00+05:60"],
    ["offset minutes 60, no colon", "2026-09-09T10:00+0560"],
    ["offset beyond 14:00", "2026-09-09T10:00+14:30"],
    ["offset hour 15", "2026-09-09T10:00-15:00"],
    ["one-digit offset", "2026-09-09T10:00+5"],
    ["three-digit offset", "2026-09-09T10:00+053"],
    ["one-digit seconds", "2026-09-09T10:00:6"],
    ["fractional minutes", "2026-09-09T10:00.5"],
  ])("%s is kept whole: %s", (_what, text) => {
    expect(n(`at ${text} ok`)).toBe(`at ${text} ok`);
  });

  it.each([
    ["February 29 in a leap year", "2024-02-29T10:00:00Z"],
    ["February 29 in 2000", "2000-02-29T10:00:00Z"],
    ["a leap second", "2016-12-31T23:59:60Z"],
    ["offset +14:00", "2026-09-09T10:00+14:00"],
    ["offset -12:00", "2026-09-09T10:00-12:00"],
    ["offset +05:45", "2026-09-09T10:00+0545"],
  ])("%s is templated: %s", (_what, text) => {
    expect(n(`at ${text} ok`)).toBe("at {timestamp} ok");
  });

  it("keeps a datetime glued to trailing digits whole rather than splitting it", () => {
    expect(n("2026-09-09T14:33:217")).toBe("2026-09-09T14:33:217");
  });
});

describe("disableRules", () => {
  it("turns built-in rules off by their table name", () => {
    const text = "at 2026-09-09T10:00:00Z ts 1767225600000 id 3f2504e04f8911d39a0c0305e82c3301";
    expect(n(text)).toBe("at {timestamp} ts {timestamp} id {uuid}");
    expect(n(text, { disableRules: ["epoch-millis"] })).toBe(
      "at {timestamp} ts 1767225600000 id {uuid}",
    );
    expect(n(text, { disableRules: ["timestamp", "uuid"] })).toBe(
      "at 2026-09-09T10:00:00Z ts {timestamp} id 3f2504e04f8911d39a0c0305e82c3301",
    );
  });

  it("turns roots off by rule name, one named root at a time too", () => {
    const opts: NormalizeOptions = { projectPath: "/w/p", roots: { cache: "/c", data: "/d" } };
    const text = "/w/p/a /home/u/b /tmp/c /c/x /d/y";
    expect(n(text, opts)).toBe("{project}/a {home}/b {tmp}/c {cache}/x {data}/y");
    expect(n(text, { ...opts, disableRules: ["root:home", "root:cache"] })).toBe(
      "{project}/a /home/u/b {tmp}/c /c/x {data}/y",
    );
    expect(n(text, { ...opts, disableRules: ["root:<name>", "root:project"] })).toBe(
      "/w/p/a {home}/b {tmp}/c /c/x /d/y",
    );
  });

  it("turns whitespace and unicode-nfc off", () => {
    expect(n("  a \n b  ", { disableRules: ["whitespace"] })).toBe("  a \n b  ");
    expect(n("cafe\u0301", { disableRules: ["unicode-nfc"] })).toBe("cafe\u0301");
  });

  it("refuses the secret rule (use the secrets option) and unknown names", () => {
    expect(() => n("x", { disableRules: ["secret"] })).toThrow(/secrets: false/);
    expect(() => n("x", { disableRules: ["epoch"] })).toThrow(/disableRules\[0\].*epoch-millis/);
    expect(() => n("x", { disableRules: "uuid" as never })).toThrow(TypeError);
  });

  it("is reflected in explainNormalization", () => {
    const r = explainNormalization("ts 1767225600000", { ...base, disableRules: ["epoch-millis"] });
    expect(r.output).toBe("ts 1767225600000");
    expect(r.counts).toEqual({});
  });
});

describe("docs/normalization.md, What can still merge: each row is true, and its opt-out works", () => {
  const same = (a: string, b: string, opts: NormalizeOptions = {}) => n(a, opts) === n(b, opts);
  it.each([
    [
      "datetimes in SQL",
      "WHERE created_at > '2026-09-09 10:00'",
      "WHERE created_at > '2026-01-01 00:00'",
      ["timestamp"],
    ],
    ["a literal token", "say {timestamp}", "say 2026-09-09T10:00:00Z", ["timestamp"]],
    [
      "two UUID-shaped digests",
      "md5 1b4e28ba2fa141d2883f0016d3cca427",
      "md5 3f2504e04f8911d39a0c0305e82c3301",
      ["uuid"],
    ],
    [
      "two order numbers in the window",
      "order 1767225600000",
      "order 1767225600001",
      ["epoch-millis"],
    ],
    [
      "unfenced Python",
      "for x in y:\n    a()\n    b()",
      "for x in y:\n    a()\nb()",
      ["whitespace"],
    ],
    ["composed and decomposed", "caf\u00e9", "cafe\u0301", ["unicode-nfc"]],
  ])("%s", (_what, a, b, off) => {
    expect(same(a, b)).toBe(true);
    expect(same(a, b, { disableRules: off })).toBe(false);
  });

  it("two pasted JWTs: no opt-out on purpose", () => {
    const jwt = (sub: string) =>
      `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ sub })).toString("base64url")}.c2lnbmF0dXJlLXNpZ25hdHVyZQ`;
    expect(same(`token ${jwt("alice")}`, `token ${jwt("bob")}`)).toBe(true);
  });
});

describe("secrets inside fenced code", () => {
  it("are still redacted, across the kept line breaks", () => {
    const text = [
      "```sh",
      "key = sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2",
      "curl -H 'Authorization: Bearer abcdefghijklmnop1234567890'",
      "-----BEGIN PRIVATE KEY-----",
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
      "-----END PRIVATE KEY-----",
      "```",
    ].join("\n");
    const out = n(text);
    expect(out).not.toMatch(/sk-proj|abcdefghijklmnop|MIIEvQ/);
    expect(out.split("\n")).toHaveLength(5);
  });
});
