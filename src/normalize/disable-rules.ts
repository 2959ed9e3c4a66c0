/**
 * `disableRules`: turning built-in rules off by their table name, per
 * recorder or per call (docs/normalization.md, "Turning rules off"). The one
 * rule that cannot be turned off here is `secret`: its switch is the
 * `secrets` option, so that a key never reaches a manifest by a typo.
 */
import type { RootSpelling } from "./roots.js";

/** Scanner rules that can be skipped, as bits. */
export const SCAN_TIMESTAMP = 1;
export const SCAN_UUID = 2;
export const SCAN_EPOCH = 4;

/** Names `disableRules` accepts (besides `root:NAME` for one extra root). */
export const DISABLEABLE_RULES: readonly string[] = Object.freeze([
  "unicode-nfc",
  "whitespace",
  "root:project",
  "root:tmp",
  "root:home",
  "root:<name>",
  "timestamp",
  "uuid",
  "epoch-millis",
]);

const ROOT_RULE = /^root:[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** What is off, resolved once per option value. */
export interface DisabledRules {
  nfc: boolean;
  whitespace: boolean;
  /** Bits of SCAN_*. */
  scan: number;
  /** Root rule names that are off (`root:project`, `root:cache`…); `root:<name>` turns every extra root off. */
  roots: ReadonlySet<string>;
  /** Stable key of the set, for caches. */
  key: string;
}

const NONE: DisabledRules = {
  nfc: false,
  whitespace: false,
  scan: 0,
  roots: new Set(),
  key: "",
};

const resolved = new WeakMap<readonly string[], DisabledRules>();

/** Validate and resolve a `disableRules` option. */
export function disabledRules(value: readonly string[] | undefined): DisabledRules {
  if (value === undefined || value === null) return NONE;
  if (!Array.isArray(value)) {
    throw new TypeError(
      'disableRules must be an array of rule names from the normalization table, e.g. ["epoch-millis"]',
    );
  }
  const hit = resolved.get(value);
  if (hit !== undefined) return hit;
  const roots = new Set<string>();
  let nfc = false;
  let whitespace = false;
  let scan = 0;
  value.forEach((name, i) => {
    if (name === "secret") {
      throw new TypeError(
        `disableRules[${i}]: the secret rule is turned off with the secrets option (secrets: false), not disableRules; think twice: keys would then be hashed and stored`,
      );
    }
    if (typeof name !== "string" || (!DISABLEABLE_RULES.includes(name) && !ROOT_RULE.test(name))) {
      throw new TypeError(
        `disableRules[${i}] is ${JSON.stringify(name)}, not a rule of the normalization table; use one of ${DISABLEABLE_RULES.join(", ")} or root:NAME for one extra root`,
      );
    }
    if (name === "unicode-nfc") nfc = true;
    else if (name === "whitespace") whitespace = true;
    else if (name === "timestamp") scan |= SCAN_TIMESTAMP;
    else if (name === "uuid") scan |= SCAN_UUID;
    else if (name === "epoch-millis") scan |= SCAN_EPOCH;
    else roots.add(name);
  });
  const out: DisabledRules = { nfc, whitespace, scan, roots, key: [...value].sort().join("\n") };
  resolved.set(value, out);
  return out;
}

const BUILT_IN_ROOTS = new Set(["root:project", "root:tmp", "root:home"]);

/** Is this root spelling turned off? */
export function rootOff(spelling: RootSpelling, off: DisabledRules): boolean {
  if (off.roots.size === 0) return false;
  if (off.roots.has(spelling.rule)) return true;
  return off.roots.has("root:<name>") && !BUILT_IN_ROOTS.has(spelling.rule);
}

const filtered = new WeakMap<readonly RootSpelling[], Map<string, readonly RootSpelling[]>>();

/** The spellings left when some root rules are off; the same array each time (matcher cache). */
export function enabledSpellings(
  spellings: readonly RootSpelling[],
  off: DisabledRules,
): readonly RootSpelling[] {
  if (off.roots.size === 0) return spellings;
  let byKey = filtered.get(spellings);
  if (byKey === undefined) {
    byKey = new Map();
    filtered.set(spellings, byKey);
  }
  let out = byKey.get(off.key);
  if (out === undefined) {
    out = spellings.filter((s) => !rootOff(s, off));
    byKey.set(off.key, out);
  }
  return out;
}
