/**
 * Where a test's cassette lives, for every test-runner helper (vitest, Jest,
 * node:test): the per-test path from the test file and its full name, and
 * the path of a cassette shared by `name`. Both stay under the cassette
 * folder whatever the names hold.
 */
import { createHash } from "node:crypto";
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";

const MAX_SLUG = 60;

/** Lower-case words joined by dashes: `Fix ../../etc (x2)!` → `fix-etc-x2`. */
function slug(text: string): string {
  const s = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // accents go, letters stay: "café" → "cafe"
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, MAX_SLUG)
    .replace(/-$/, "");
  return s === "" ? "test" : s;
}

/** A path segment that is safe on every filesystem and never `.`/`..` or hidden. */
function safeSegment(segment: string): string {
  const s = segment.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+/, "");
  return s === "" ? "_" : s.slice(0, 100);
}

/**
 * The cassette of one test: `<root>/<dir>/<test file without extension>/<slug>-<hash>.yaml`.
 * The hash (10 hex of sha256 over the file's path and the exact test name)
 * keeps tests whose names slug alike apart. Test files outside `root` go
 * under `_external/`.
 *
 * @throws RangeError if the result would leave `<root>/<dir>` (cannot happen
 * by construction; checked anyway).
 * @example
 * cassettePathFor("/repo/test/plan.test.ts", "planner replans", { root: "/repo" })
 * // "/repo/cassettes/test/plan/planner-replans-1f3a9c0b2d.yaml"
 */
export function cassettePathFor(
  testFile: string,
  testName: string,
  opts: { dir?: string; root?: string } = {},
): string {
  const root = resolve(opts.root ?? process.cwd());
  const base = resolve(root, opts.dir ?? "cassettes");
  const abs = resolve(root, testFile);
  let rel = relative(root, abs);
  const outside = rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel);
  const fileKey = outside ? abs : rel.split(sep).join("/");
  if (outside)
    rel = join("_external", `${safeSegment(stripTestExt(abs.split(sep).pop() ?? "test"))}`);
  const folder = stripTestExt(rel)
    .split(sep)
    .filter((s) => s !== "")
    .map(safeSegment);
  const hash = createHash("sha256").update(`${fileKey}\n${testName}`).digest("hex").slice(0, 10);
  const path = join(base, ...folder, `${slug(testName)}-${hash}.yaml`);
  return inside(base, path);
}

/**
 * The cassette called `name` (`"shared/planner"`) under `<root>/<dir>`,
 * `.yaml` added when missing. The mapping is injective: two different names
 * never share a file. A segment made of `A-Z a-z 0-9 . _ -` (not starting
 * with `.` or `-`) is used as it is; any other character is escaped as `~`
 * and its UTF-8 bytes in hex (`"my planner"` → `my~20planner`; `~` itself is
 * `~7e`, so an escape is never ambiguous), and a segment longer than 100
 * characters keeps its first 80 and ends in `~~` and a hash of the whole.
 * `/` and `\` separate folders; an absolute name, `.` and `..` segments are
 * refused (a name stays under `dir`).
 *
 * @example
 * namedCassettePath("shared/planner", { root: "/repo" }) // "/repo/cassettes/shared/planner.yaml"
 * namedCassettePath("shared/my planner", { root: "/repo" }) // "/repo/cassettes/shared/my~20planner.yaml"
 */
export function namedCassettePath(
  name: string,
  opts: { dir?: string; root?: string } = {},
): string {
  if (typeof name !== "string" || name.trim() === "") {
    throw new TypeError('withCassette: name must be a non-empty string such as "shared/planner"');
  }
  if (/^[\\/]|^[A-Za-z]:/.test(name)) {
    throw new TypeError(
      `withCassette: name ${JSON.stringify(name)} must be relative to the cassette folder, e.g. "shared/planner"`,
    );
  }
  const root = resolve(opts.root ?? process.cwd());
  const base = resolve(root, opts.dir ?? "cassettes");
  const parts = name.split(/[\\/]+/).filter((s) => s !== "");
  if (parts.some((s) => s === "." || s === "..")) {
    throw new TypeError(
      `withCassette: name ${JSON.stringify(name)} has a "." or ".." segment; a cassette name stays inside the cassette folder`,
    );
  }
  const last = parts.pop() ?? "cassette";
  const ext = extname(last) === ".yaml" || extname(last) === ".yml" ? extname(last) : "";
  const file = `${escapeSegment(ext === "" ? last : last.slice(0, -ext.length))}${ext || ".yaml"}`;
  return inside(base, join(base, ...parts.map(escapeSegment), file));
}

const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const MAX_SEGMENT = 100;

/** One name segment as a file name: itself when safe, else escaped (see namedCassettePath). */
function escapeSegment(segment: string): string {
  let out = SAFE_SEGMENT.test(segment)
    ? segment
    : [...segment]
        .map((ch, i) => {
          if (/[A-Za-z0-9_]/.test(ch) || (i > 0 && /[.-]/.test(ch))) return ch;
          // A lone surrogate has no UTF-8: its code unit, marked apart (u is not a hex digit).
          if (!ch.isWellFormed()) return `~u${ch.charCodeAt(0).toString(16)}`;
          return [...Buffer.from(ch, "utf8")]
            .map((b) => `~${b.toString(16).padStart(2, "0")}`)
            .join("");
        })
        .join("");
  if (out.length > MAX_SEGMENT) {
    const hash = createHash("sha256").update(segment).digest("hex").slice(0, 16);
    out = `${out.slice(0, 80)}~~${hash}`;
  }
  return out;
}

function stripTestExt(path: string): string {
  return path.replace(/(\.(test|spec))?\.[cm]?[jt]sx?$/, "");
}

function inside(base: string, path: string): string {
  const rel = relative(base, path);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || dirname(path) === path) {
    throw new RangeError(`invocache: cassette path ${path} would leave ${base}`);
  }
  return path;
}
