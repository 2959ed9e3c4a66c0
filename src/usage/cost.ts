/**
 * What tokens cost, from the price table of `@pydantic/genai-prices` (a
 * maintained, dependency-free table bundled in the package: nothing is
 * fetched, ever; its remote update is opt-in and never called here). The
 * table is loaded on the first price asked for, synchronously, so importing
 * invocache costs nothing and a recorder's counters stay synchronous.
 *
 * Every cost carries the snapshot it was priced with: prices change, and a
 * figure without its date is a guess.
 */
import { createRequire } from "node:module";
import type { Usage } from "./extract.js";

/** The price table in use: the package, its pinned version, and that version's publication date. */
export interface PriceSnapshot {
  source: "@pydantic/genai-prices";
  version: string;
  /** The day the pinned version of the table was published (YYYY-MM-DD). */
  date: string;
}

/**
 * The pinned price table. A test checks `version` against the installed
 * package, so bumping the dependency means updating the date here too.
 */
export const PRICE_SNAPSHOT: Readonly<PriceSnapshot> = Object.freeze({
  source: "@pydantic/genai-prices",
  version: "0.1.8",
  date: "2026-09-23",
});

/** The price of one call, in US dollars. */
export interface Cost {
  usd: number;
  inputUsd: number;
  outputUsd: number;
  /** The table's model id the call was priced as (e.g. `gpt-4o-mini`). */
  pricedAs: string;
  provider: string;
  snapshot: Readonly<PriceSnapshot>;
}

type CalcPrice = (
  usage: Record<string, number | undefined>,
  modelId: string,
  options?: { providerId?: string },
) => null | {
  input_price: number;
  output_price: number;
  total_price: number;
  /** The prices used, per million tokens (`input_mtok`…): a number, or tiers past a prompt size. */
  model_price: Record<string, unknown>;
  model: { id: string };
  provider: { id: string };
};

let calc: CalcPrice | null | undefined;

function calculator(): CalcPrice | null {
  if (calc === undefined) {
    try {
      const require = createRequire(import.meta.url);
      calc = (require("@pydantic/genai-prices") as { calcPrice: CalcPrice }).calcPrice;
    } catch {
      calc = null; // not installed (a trimmed install): tokens only, "price unknown"
    }
  }
  return calc;
}

/**
 * Whether the price table is loaded (or known to be missing): pricing is
 * then a memoized lookup, and the recorder prices each call at once instead
 * of keeping it for later (src/usage/summary.ts).
 */
export function priceTableLoaded(): boolean {
  return calc !== undefined;
}

/** `openai.chat:gpt-4o` (AI SDK model ids) → provider hint and model id. */
function splitModel(model: string): { modelId: string; providerId?: string } {
  const colon = model.indexOf(":");
  if (colon <= 0) return { modelId: model };
  const provider = model.slice(0, colon).split(".")[0]!;
  return { modelId: model.slice(colon + 1), providerId: provider };
}

/**
 * The cost of `usage` for `model` (the response's model name first, then
 * the requested one), or `undefined` when the table has no price for it:
 * show the tokens and "price unknown", never a made-up figure.
 *
 * @example
 * costOf("gpt-4o-mini", { shape: "openai.chat", inputTokens: 1000, outputTokens: 500 })?.usd // 0.00045
 */
export function costOf(model: string | undefined, usage: Usage): Cost | undefined {
  // A table lookup costs ~0.2 ms (it matches the model against every provider):
  // far more than a hit. A replayed entry asks for the same figures again and again:
  // the last figures asked for are compared field by field first (no key is built).
  const l = last;
  if (
    l !== undefined &&
    l.model === model &&
    l.usageModel === usage.model &&
    l.inputTokens === usage.inputTokens &&
    l.outputTokens === usage.outputTokens &&
    l.cacheReadTokens === (usage.cacheReadTokens ?? 0) &&
    l.cacheWriteTokens === (usage.cacheWriteTokens ?? 0)
  ) {
    return l.cost;
  }
  const cost = memoized(model, usage);
  last = {
    model,
    usageModel: usage.model,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens ?? 0,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    cost,
  };
  return cost;
}

/** The figures `costOf` priced last, and their cost. */
let last:
  | {
      model: string | undefined;
      usageModel: string | undefined;
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
      cost: Cost | undefined;
    }
  | undefined;

function memoized(model: string | undefined, usage: Usage): Cost | undefined {
  const key = `${model}\u0000${usage.model}\u0000${usage.inputTokens}:${usage.outputTokens}:${usage.cacheReadTokens ?? 0}:${usage.cacheWriteTokens ?? 0}`;
  if (memo.has(key)) {
    const cost = memo.get(key);
    memo.delete(key); // most recently used last
    memo.set(key, cost);
    return cost;
  }
  const cost = lookUp(model, usage);
  memo.set(key, cost);
  if (memo.size > MEMO_SIZE) memo.delete(memo.keys().next().value as string);
  return cost;
}

const MEMO_SIZE = 4096;
const memo = new Map<string, Cost | undefined>();

function lookUp(model: string | undefined, usage: Usage): Cost | undefined {
  const names = [usage.model, model].filter((m): m is string => typeof m === "string" && m !== "");
  const calcPrice = names.length === 0 ? null : calculator();
  if (calcPrice === null) return undefined;
  const tokens = {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    ...(usage.cacheReadTokens ? { cache_read_tokens: usage.cacheReadTokens } : {}),
    ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
  };
  for (const name of names) {
    const { modelId, providerId } = splitModel(name);
    let price: ReturnType<CalcPrice>;
    try {
      price = calcPrice(tokens, modelId, providerId === undefined ? {} : { providerId });
      if (price === null && providerId !== undefined) price = calcPrice(tokens, modelId);
    } catch {
      price = null; // a usage the table cannot price (e.g. inconsistent cache counts)
    }
    if (price === null) continue;
    // Frozen: one memoized object is handed to every caller.
    return Object.freeze({
      usd: price.total_price,
      inputUsd: price.input_price,
      outputUsd: price.output_price,
      pricedAs: price.model.id,
      provider: price.provider.id,
      snapshot: PRICE_SNAPSHOT,
    });
  }
  return undefined;
}

/** The per-million-token prices of the four token counts a `Usage` has. */
const TOKEN_PRICES = ["input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok"];
const linearMemo = new Map<string, boolean>();

/**
 * Whether calls to `model` (answered as `usageModel`, when the response
 * names one) cost a whole number of nanodollars per token of each kind, the
 * same for every call: then the cost of many calls' usage summed is, to the
 * nanodollar, the sum of their costs each rounded to the nanodollar, and a
 * store can sum the tokens instead of pricing every call. False for tiered
 * prices (a higher price past a prompt size) and fractions of a nanodollar
 * per token; true for a model the table has no price for (unpriced either way).
 *
 * @example
 * linearPrice("gpt-4o-mini", undefined) // true: $0.15 and $0.60 per million tokens
 * linearPrice("gemini-2.5-pro", undefined) // false: tiered past 200k prompt tokens
 */
export function linearPrice(model: string | undefined, usageModel: string | undefined): boolean {
  const key = `${model}\u0000${usageModel}`;
  const known = linearMemo.get(key);
  if (known !== undefined) return known;
  const names = [usageModel, model].filter((m): m is string => typeof m === "string" && m !== "");
  const calcPrice = names.length === 0 ? null : calculator();
  let linear = true;
  if (calcPrice !== null) {
    // The price the calls get: the first name the table prices (as lookUp).
    for (const name of names) {
      const { modelId, providerId } = splitModel(name);
      let price: ReturnType<CalcPrice> = null;
      const tokens = { input_tokens: 1, output_tokens: 1 };
      try {
        price = calcPrice(tokens, modelId, providerId === undefined ? {} : { providerId });
        if (price === null && providerId !== undefined) price = calcPrice(tokens, modelId);
      } catch {
        price = null;
      }
      if (price === null) continue;
      linear = TOKEN_PRICES.every((k) => {
        const p = price.model_price[k];
        if (p === undefined) return true;
        if (typeof p !== "number") return false;
        const nano = p * 1000; // $ per million tokens -> nanodollars per token
        return Math.abs(nano - Math.round(nano)) < 1e-6;
      });
      break;
    }
  }
  linearMemo.set(key, linear);
  return linear;
}
