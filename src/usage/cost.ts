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

/**
 * What one token of each kind costs a call to a model, in whole
 * nanodollars, below any price tier: `input` an uncached input token,
 * `cacheRead` / `cacheWrite` an input token read from / written to the
 * prompt cache (in place of an uncached one), `output` an output token.
 */
export interface UnitPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The smallest prompt (input tokens) past which a higher price applies; Infinity when none. */
  tierStart: number;
}

const unitMemo = new Map<string, UnitPrices | null | undefined>();

/**
 * The unit prices of calls to `model` (answered as `usageModel`, when the
 * response names one), so that many calls' summed tokens can be priced at
 * once: up to `tierStart` input tokens a call costs, to the nanodollar,
 * `(in - cacheRead - cacheWrite) * input + out * output + cacheRead *
 * cacheRead + cacheWrite * cacheWrite`, and so does any sum of such calls.
 * Undefined when the table has no price for it (unpriced either way); null
 * when a token costs a fraction of a nanodollar (each call's cost is
 * rounded on its own: price them one by one).
 *
 * @example
 * unitPrices("gpt-4o-mini", undefined) // { input: 150, output: 600, cacheRead: 75, …, tierStart: Infinity }
 */
export function unitPrices(
  model: string | undefined,
  usageModel: string | undefined,
): UnitPrices | null | undefined {
  const key = `${model}\u0000${usageModel}`;
  if (unitMemo.has(key)) return unitMemo.get(key);
  const nano = (inputTokens: number, outputTokens: number, more: Partial<Usage> = {}) => {
    const usage: Usage = { shape: "openai.chat", inputTokens, outputTokens, ...more };
    if (usageModel !== undefined) usage.model = usageModel;
    const cost = lookUp(model, usage);
    return cost === undefined ? undefined : cost.usd * 1e9;
  };
  const units = [
    nano(1, 0),
    nano(0, 1),
    nano(1, 0, { cacheReadTokens: 1 }),
    nano(1, 0, { cacheWriteTokens: 1 }),
  ];
  let out: UnitPrices | null | undefined;
  if (units.some((u) => u === undefined)) out = undefined;
  else if (units.some((u) => Math.abs(u! - Math.round(u!)) > 1e-6)) out = null;
  else {
    const [input, output, cacheRead, cacheWrite] = units.map((u) => Math.round(u!)) as [
      number,
      number,
      number,
      number,
    ];
    out = { input, output, cacheRead, cacheWrite, tierStart: tierStart(model, usageModel) };
  }
  unitMemo.set(key, out);
  return out;
}

/** The smallest tier start of the price the calls get (the first name the table prices, as lookUp). */
function tierStart(model: string | undefined, usageModel: string | undefined): number {
  const calcPrice = calculator();
  if (calcPrice === null) return Number.POSITIVE_INFINITY;
  for (const name of [usageModel, model]) {
    if (name === undefined || name === "") continue;
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
    let start = Number.POSITIVE_INFINITY;
    for (const p of Object.values(price.model_price)) {
      const tiers = (p as { tiers?: Array<{ start: number }> } | undefined)?.tiers;
      for (const t of tiers ?? []) start = Math.min(start, t.start);
    }
    return start;
  }
  return Number.POSITIVE_INFINITY;
}
