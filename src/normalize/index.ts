export {
  explainNormalization,
  type NormalizationReport,
  type NormalizeOptions,
  normalizePrompt,
} from "./normalize.js";
export { clearRootCache } from "./roots.js";
export { NORMALIZATION_RULES, NORMALIZATION_VERSION, type NormalizationRule } from "./rules.js";
export type { RuleMatch } from "./scanner.js";
export { refreshSecretEnv, type SecretsSetting } from "./secrets-rule.js";
