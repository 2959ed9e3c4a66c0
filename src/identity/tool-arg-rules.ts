/**
 * Which normalization rules a tool's arguments go through (recipe tool v2,
 * docs/identity.md, "Tool identities"). A prompt is prose: a UUID, a
 * timestamp or a run of spaces in it is noise. An argument is data: the
 * UUID of an order, the date a query starts from, the spaces of a grep
 * pattern are the question itself. So arguments keep everything by default,
 * and only the checkout/home/tmp roots rule applies (the same file on
 * another machine is the same argument). A tool opts into more, or into
 * nothing, explicitly.
 */
import { InvocacheError } from "../errors.js";
import { DISABLEABLE_RULES } from "../normalize/internal.js";

/**
 * `"roots"` (default): only the root rules (`root:project`, `root:tmp`,
 * `root:home`, extra roots). `"prompt"`: the whole prompt table, as recipe
 * tool v1 did. `"none"`: nothing. A list: exactly those rules of the table,
 * by name (e.g. `["root:project", "uuid"]`). Secrets are redacted in every
 * setting (that switch is the `secrets` option, never this one).
 */
export type ToolArgRules = "roots" | "prompt" | "none" | readonly string[];

/** The setting as it is written in a tool v2 manifest. */
export type ManifestArgRules = "roots" | "prompt" | "none" | string[];

/** The root rules: the one kind of normalization that is exact for data. */
export const ROOT_RULES: readonly string[] = Object.freeze([
  "root:project",
  "root:tmp",
  "root:home",
  "root:<name>",
]);

// One array per constant setting: the normalizer caches what it resolves per array.
const ROOTS_ONLY = DISABLEABLE_RULES.filter((name) => !ROOT_RULES.includes(name));
const NOTHING = [...DISABLEABLE_RULES];

const ROOT_RULE = /^root:[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** A bad `argRules` option: names the option and what it accepts. */
export class ToolArgRulesError extends InvocacheError {
  constructor(message: string) {
    super("ERR_TOOL_ARG_RULES", message);
  }
}

/** Validate an `argRules` value and give its manifest form (a list sorted, without repeats). */
export function manifestArgRules(value: unknown, tool: string): ManifestArgRules {
  if (value === undefined || value === null) return "roots";
  if (value === "roots" || value === "prompt" || value === "none") return value;
  if (!Array.isArray(value)) {
    throw new ToolArgRulesError(
      `tool ${tool}: argRules must be "roots" (the default), "prompt", "none" or a list of rule names such as ["root:project", "uuid"], got ${typeof value === "string" ? JSON.stringify(value) : typeof value}`,
    );
  }
  value.forEach((name, i) => {
    if (typeof name !== "string" || (!DISABLEABLE_RULES.includes(name) && !ROOT_RULE.test(name))) {
      throw new ToolArgRulesError(
        `tool ${tool}: argRules[${i}] is ${JSON.stringify(name)}, not a rule of the normalization table; use ${DISABLEABLE_RULES.join(", ")} or root:NAME (secrets are always redacted: that is the secrets option)`,
      );
    }
  });
  return [...new Set(value as string[])].sort();
}

/**
 * The `disableRules` that make the prompt normalizer apply exactly `rules`
 * to an argument string, or undefined for the whole table. `extraRoots` are
 * the names of the extra roots in effect (the `roots` option), so a list
 * naming one of them (`root:cache`) keeps only that one.
 */
export function disabledForArgs(
  rules: ManifestArgRules,
  extraRoots: readonly string[],
): string[] | undefined {
  if (rules === "prompt") return undefined;
  if (rules === "roots") return ROOTS_ONLY;
  if (rules === "none") return NOTHING;
  const on: readonly string[] = rules;
  const off = DISABLEABLE_RULES.filter((name) => !on.includes(name));
  if (off.includes("root:<name>") && on.some((n) => ROOT_RULE.test(n))) {
    // Some extra roots named one by one: turn the others off one by one.
    return [
      ...off.filter((n) => n !== "root:<name>"),
      ...extraRoots.map((n) => `root:${n}`).filter((n) => !on.includes(n)),
    ];
  }
  return off;
}

/** True when the caller's extra prompt rules (`rules`) apply to arguments too. */
export function extraRulesApply(rules: ManifestArgRules): boolean {
  return rules === "prompt";
}
