/**
 * The argument pairs of issue 29 that recipe tool v1 merged: each pair is
 * two different questions (data, not prose), so each call must reach the
 * tool. And one pair that is the same question asked on two machines: a
 * path under the project root, which must be one identity.
 */

export type Args = { id?: string; since?: string; pattern?: string; path?: string };

export const DISTINCT_PAIRS: ReadonlyArray<readonly [string, Args, Args]> = [
  [
    "two order UUIDs",
    { id: "550e8400-e29b-41d4-a716-446655440000" },
    { id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8" },
  ],
  ["13-digit string ids", { id: "1767225600000" }, { id: "1767225600001" }],
  ["ISO dates", { since: "2020-01-01T00:00:00Z" }, { since: "2026-01-01T00:00:00Z" }],
  ["two spaces vs one", { pattern: "foo  bar" }, { pattern: "foo bar" }],
  ["newline vs space", { pattern: "foo\nbar" }, { pattern: "foo bar" }],
  ["NBSP vs space", { pattern: "foo\u00a0bar" }, { pattern: "foo bar" }],
  ["trailing space", { pattern: "foo bar " }, { pattern: "foo bar" }],
];

/** Every distinct argument object of the pairs, each once. */
export function distinctArgs(): Args[] {
  const seen = new Map<string, Args>();
  for (const [, a, b] of DISTINCT_PAIRS) {
    for (const x of [a, b]) seen.set(JSON.stringify(x), x);
  }
  return [...seen.values()];
}

/** The same file on two machines: checkout roots differ, the path under them does not. */
export const MACHINES = [
  { projectPath: "/work/machine-a/checkout", args: { path: "/work/machine-a/checkout/src/a.ts" } },
  { projectPath: "/srv/ci/b/checkout", args: { path: "/srv/ci/b/checkout/src/a.ts" } },
] as const;
