// Token usage, cost and savings accounting (`invocache/usage`): pure
// translations of response shapes and sums over the recorder's calls.
// Re-exports only; see docs/observability.md.
export {
  type Cost,
  costOf,
  PRICE_SNAPSHOT,
  type PriceSnapshot,
  priceTableLoaded,
  type UnitPrices,
  unitPrices,
} from "./cost.js";
export {
  extractUsage,
  plausibleUsage,
  readUsage,
  USAGE_TOKEN_LIMIT,
  type Usage,
  type UsageReading,
  type UsageShape,
  usageProblem,
} from "./extract.js";
export {
  type Accounts,
  addToAccounts,
  addToTally,
  type CallSummary,
  emptyAccounts,
  emptyTally,
  formatSpend,
  formatTokens,
  formatUsd,
  priceCall,
  type Spend,
  settleAccounts,
  type Tally,
} from "./summary.js";
