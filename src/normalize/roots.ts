/**
 * Root spellings: the one place where normalization touches the machine
 * (os.homedir(), os.tmpdir(), realpath of roots). Everything here is cached
 * per option set, because a realpath on every call would dominate the cost of
 * normalizing a prompt.
 */
import { realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, resolve } from "node:path";

/** One way a root may appear in text. */
export interface RootSpelling {
  /** Rule name, e.g. `root:project`. */
  rule: string;
  /** What replaces it, e.g. `{project}`. */
  token: string;
  /** The literal text to find. */
  text: string;
  /** Windows spellings match with ASCII case folding; POSIX ones exactly. */
  caseInsensitive: boolean;
  /** Tie-break among equal spellings: project, tmp, home, extra roots. */
  priority: number;
}

/** The root-related options of `normalizePrompt`. */
export interface RootOptions {
  projectPath?: string | null | undefined;
  homeDir?: string | undefined;
  tmpDirs?: readonly string[] | undefined;
  roots?: Readonly<Record<string, string>> | undefined;
}

const RESERVED_ROOT_NAMES = new Set(["project", "home", "tmp", "uuid", "timestamp", "secret"]);
const ROOT_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const WINDOWS_DRIVE = /^[A-Za-z]:(?:[\\/]|$)/;
const WINDOWS_UNC = /^[\\/]{2}[^\\/]/;
const MAX_CACHE = 256;

const cache = new Map<string, readonly RootSpelling[]>();

/**
 * Every spelling of every root for these options, longest first.
 * Explicit roots that are unusable (`/`, empty, a bare drive) throw a
 * `RangeError` naming the option; defaults taken from the OS are skipped.
 */
export function rootSpellings(options: RootOptions): readonly RootSpelling[] {
  const home = options.homeDir ?? homedir();
  const tmps = options.tmpDirs ?? defaultTmpDirs();
  const projectPath = options.projectPath ?? null;
  const roots = options.roots ?? null;
  const l = last;
  if (l !== undefined && l.projectPath === projectPath && l.home === home) {
    if (sameStrings(l.tmps, tmps) && sameRoots(l.roots, roots)) return l.spellings;
  }
  const key = JSON.stringify([projectPath, home, tmps, roots]);
  const hit = cache.get(key);
  if (hit !== undefined) {
    last = lastCall(projectPath, home, tmps, roots, hit);
    return hit;
  }

  const out: RootSpelling[] = [];
  const add = (rule: string, token: string, priority: number, spellings: Iterable<string>) => {
    for (const raw of spellings) {
      // The text is NFC'd and whitespace-collapsed before roots are matched,
      // so the spellings must be too (macOS may hand out decomposed paths).
      const s = raw.normalize("NFC").replace(/\s+/g, " ");
      const caseInsensitive = WINDOWS_DRIVE.test(s) || WINDOWS_UNC.test(s);
      out.push({ rule, token, text: s, caseInsensitive, priority });
    }
  };

  if (options.projectPath != null) {
    checkString(options.projectPath, "projectPath");
    add("root:project", "{project}", 0, spellingsOf(options.projectPath, "projectPath", true));
  }
  tmps.forEach((dir, i) => {
    checkString(dir, `tmpDirs[${i}]`);
    add(
      "root:tmp",
      "{tmp}",
      1,
      macPrivateForms(spellingsOf(dir, `tmpDirs[${i}]`, options.tmpDirs !== undefined)),
    );
  });
  checkString(home, "homeDir");
  add("root:home", "{home}", 2, spellingsOf(home, "homeDir", options.homeDir !== undefined));
  if (options.roots != null) {
    if (typeof options.roots !== "object") {
      throw new TypeError(
        "roots must be an object mapping names to paths, e.g. { cache: '/var/cache/ci' }",
      );
    }
    let priority = 3;
    for (const [name, dir] of Object.entries(options.roots)) {
      if (!ROOT_NAME.test(name) || RESERVED_ROOT_NAMES.has(name)) {
        throw new TypeError(
          `roots: ${JSON.stringify(name)} is not a usable root name; use letters, digits, _ or - (starting with a letter), not one of ${[...RESERVED_ROOT_NAMES].join(", ")}`,
        );
      }
      checkString(dir, `roots.${name}`);
      add(`root:${name}`, `{${name}}`, priority++, spellingsOf(dir, `roots.${name}`, true));
    }
  }

  // Longest spelling first; equal spellings keep the higher-priority root.
  out.sort((a, b) => b.text.length - a.text.length || a.priority - b.priority);
  const frozen = Object.freeze(dedupe(out));
  if (cache.size >= MAX_CACHE) cache.delete(cache.keys().next().value as string);
  cache.set(key, frozen);
  last = lastCall(projectPath, home, tmps, roots, frozen);
  return frozen;
}

/**
 * The last call's options, copied, and its answer: a request's identity
 * builds its normalizer anew, so the same options come on every call, and
 * comparing them value by value (copies, so an array or object changed in
 * place since is a miss) costs less than the cache key: 3.2 → ~1.6 µs a call
 * with the OS defaults, 1.3 → ~0.2 µs with explicit roots (docs/performance.md).
 */
interface LastCall {
  projectPath: unknown;
  home: unknown;
  tmps: readonly unknown[];
  roots: readonly [string, unknown][] | null;
  spellings: readonly RootSpelling[];
}
let last: LastCall | undefined;

function lastCall(
  projectPath: unknown,
  home: unknown,
  tmps: readonly unknown[],
  roots: Readonly<Record<string, unknown>> | null,
  spellings: readonly RootSpelling[],
): LastCall {
  return {
    projectPath,
    home,
    tmps: [...tmps],
    roots: roots === null ? null : Object.entries(roots),
    spellings,
  };
}

function sameStrings(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (!Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameRoots(
  a: readonly [string, unknown][] | null,
  b: Readonly<Record<string, unknown>> | null,
): boolean {
  if (a === null || b === null) return a === b;
  if (typeof b !== "object") return false;
  const keys = Object.keys(b);
  if (keys.length !== a.length) return false;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== a[i]![0] || b[keys[i]!] !== a[i]![1]) return false;
  }
  return true;
}

/** Forget cached spellings (tests that create or remove directories use this). */
export function clearRootCache(): void {
  cache.clear();
  last = undefined;
}

/**
 * The default tmp directories, from `os.tmpdir()`, which reads TMPDIR, TMP
 * and TEMP (on Windows TEMP, TMP, SystemRoot and windir) on every call, each
 * read a few microseconds on Linux: more than the rest of a short string's
 * normalization. Its answer is kept with the values of those variables it
 * was computed from and reused only while every one of them is unchanged,
 * so a changed environment always gives the fresh answer.
 */
let lastTmp: { env: (string | undefined)[]; dirs: readonly string[] } | undefined;

const WINDOWS = process.platform === "win32";

function tmpEnv(): (string | undefined)[] {
  const env = process.env;
  return WINDOWS
    ? [env.TEMP, env.TMP, env.SystemRoot, env.windir]
    : [env.TMPDIR, env.TMP, env.TEMP];
}

function defaultTmpDirs(): readonly string[] {
  const now = tmpEnv();
  const l = lastTmp;
  if (l !== undefined && now.every((v, i) => v === l.env[i])) return l.dirs;
  const t = tmpdir();
  const dirs = Object.freeze(t === "/tmp" ? ["/tmp"] : [t, "/tmp"]);
  lastTmp = { env: now, dirs };
  return dirs;
}

function checkString(value: unknown, field: string): asserts value is string {
  if (typeof value !== "string") {
    throw new TypeError(`${field} must be a string path, got ${typeof value}`);
  }
}

/**
 * The spellings of one root: as given (when absolute), resolved, and its real
 * path when it exists. Windows paths get their `\`, `/` and JSON-escaped
 * `\\` forms instead, since they cannot be resolved on a POSIX machine.
 */
function spellingsOf(given: string, field: string, explicit: boolean): string[] {
  const refuse = (why: string): string[] => {
    if (!explicit) return [];
    throw new RangeError(
      `${field} ${JSON.stringify(given)} ${why}; pass the project's own directory instead`,
    );
  };
  if (given.trim() === "") return refuse("is empty");

  if (WINDOWS_DRIVE.test(given) || WINDOWS_UNC.test(given)) {
    const unc = WINDOWS_UNC.test(given);
    const parts = given.split(/[\\/]+/).filter((p) => p !== "");
    if (parts.length < 2)
      return refuse("is a bare drive or share root, which would match every path");
    const head = unc ? ["", ""] : [];
    const segs = [...head, ...parts];
    return [segs.join("\\"), segs.join("/"), segs.join("\\\\")];
  }

  const set = new Set<string>();
  if (isAbsolute(given)) set.add(trimSeparators(given));
  const resolved = resolve(given);
  set.add(trimSeparators(resolved));
  try {
    // macOS: /tmp and /var are symlinks into /private, so the real path of a
    // project under them is spelled differently in tool output.
    set.add(trimSeparators(realpathSync.native(resolved)));
  } catch {
    // The root does not exist here (a recorded path from another machine): its
    // given and resolved spellings still apply.
  }
  set.delete("");
  if (set.size === 0 || [...set].some((s) => s === "" || s === "/")) {
    return refuse("is the filesystem root, which would match every path");
  }
  return [...set];
}

function trimSeparators(p: string): string {
  let end = p.length;
  while (end > 0 && p.charCodeAt(end - 1) === 47 /* / */) end--;
  return p.slice(0, end);
}

/** `/private/var/x` and `/var/x` name the same macOS directory; add the other spelling. */
function macPrivateForms(spellings: string[]): string[] {
  const out = new Set(spellings);
  for (const s of spellings) {
    if (s.startsWith("/private/var/") || s.startsWith("/private/tmp")) out.add(s.slice(8));
    else if (s.startsWith("/var/") || s === "/tmp" || s.startsWith("/tmp/"))
      out.add(`/private${s}`);
  }
  return [...out];
}

function dedupe(list: RootSpelling[]): RootSpelling[] {
  const seen = new Set<string>();
  return list.filter((r) => {
    const k = r.caseInsensitive ? `i:${asciiLower(r.text)}` : `s:${r.text}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** ASCII-only lower-casing: Windows paths fold case, but only A-Z (no locale rules). */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}
