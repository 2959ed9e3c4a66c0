/**
 * Field-by-field difference of two JSON values: a live tool result that
 * differs from its recording is reported like a miss, by the paths that
 * changed, and two tool manifests are explained the same way (identity's
 * kind table). A leaf so that identity and the recorder share it.
 */

/** One differing path (`$.content[0].text`) with both sides. */
export interface ValueDiff {
  path: string;
  expected: unknown;
  actual: unknown;
}

const MAX_DIFFS = 20;

/**
 * The differing leaf paths of `expected` and `actual` (at most 20).
 *
 * @example
 * diffJson({ a: 1, b: [1] }, { a: 2, b: [1, 2] })
 * // [{ path: "$.a", expected: 1, actual: 2 }, { path: "$.b[1]", expected: undefined, actual: 2 }]
 */
export function diffJson(expected: unknown, actual: unknown): ValueDiff[] {
  const out: ValueDiff[] = [];
  walk(expected, actual, "$", out);
  return out;
}

function walk(a: unknown, b: unknown, path: string, out: ValueDiff[]): void {
  if (out.length >= MAX_DIFFS) return;
  if (Object.is(a, b)) return;
  const aObj = a !== null && typeof a === "object";
  const bObj = b !== null && typeof b === "object";
  if (aObj && bObj && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`, out);
      return;
    }
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort();
    for (const k of keys) {
      const seg = /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
      walk(ra[k], rb[k], `${path}${seg}`, out);
    }
    return;
  }
  out.push({ path, expected: a, actual: b });
}

/** One line per diff, for error messages. */
export function formatDiffs(diffs: readonly ValueDiff[]): string {
  return diffs.map((d) => `  ${d.path}: ${short(d.expected)} → ${short(d.actual)}`).join("\n");
}

function short(v: unknown): string {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}
