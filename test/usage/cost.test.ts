/**
 * Cost from the bundled price table of @pydantic/genai-prices: figures as
 * the package's own table states them (per million tokens), no network, the
 * snapshot recorded with every cost, and "price unknown" for an unknown model.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import { costOf, PRICE_SNAPSHOT } from "../../src/usage/cost.js";

afterEach(() => vi.unstubAllGlobals());

describe("costOf", () => {
  it("gpt-4o-mini: $0.15 / $0.60 per Mtok, cached input at $0.075 (the table's figures)", () => {
    const cost = costOf("gpt-4o-mini", {
      shape: "openai.chat",
      inputTokens: 1_000_000,
      outputTokens: 1_000_000,
    });
    expect(cost?.usd).toBeCloseTo(0.15 + 0.6, 9);
    expect(cost?.pricedAs).toBe("gpt-4o-mini");
    expect(cost?.provider).toBe("openai");
    // 400k of the input read from the prompt cache: 600k × 0.15 + 400k × 0.075.
    const cached = costOf("gpt-4o-mini", {
      shape: "openai.chat",
      inputTokens: 1_000_000,
      outputTokens: 0,
      cacheReadTokens: 400_000,
    });
    expect(cached?.usd).toBeCloseTo(0.6 * 0.15 + 0.4 * 0.075, 9);
  });

  it("claude-sonnet-4-5: $3 / $15 per Mtok, cache writes $3.75, reads $0.30", () => {
    const cost = costOf("claude-sonnet-4-5", {
      shape: "anthropic.messages",
      inputTokens: 100_000,
      outputTokens: 10_000,
      cacheReadTokens: 20_000,
      cacheWriteTokens: 30_000,
    });
    const expected = (50_000 * 3 + 20_000 * 0.3 + 30_000 * 3.75 + 10_000 * 15) / 1e6;
    expect(cost?.usd).toBeCloseTo(expected, 9);
    expect(cost?.inputUsd).toBeCloseTo((50_000 * 3 + 20_000 * 0.3 + 30_000 * 3.75) / 1e6, 9);
    expect(cost?.outputUsd).toBeCloseTo(0.15, 9);
  });

  it("agrees with the package's own calcPrice", () => {
    const { calcPrice } = createRequire(import.meta.url)("@pydantic/genai-prices") as {
      calcPrice: (u: Record<string, number>, m: string) => { total_price: number } | null;
    };
    for (const model of ["gpt-4o-mini", "claude-sonnet-4-5"]) {
      const ours = costOf(model, { shape: "openai.chat", inputTokens: 1234, outputTokens: 567 });
      const theirs = calcPrice({ input_tokens: 1234, output_tokens: 567 }, model);
      expect(ours?.usd).toBe(theirs?.total_price);
    }
  });

  it("prefers the response's model name, and reads AI SDK ids (provider:model)", () => {
    const usage = { shape: "ai-sdk" as const, inputTokens: 1_000_000, outputTokens: 0 };
    expect(costOf("openai.chat:gpt-4o-mini", usage)?.usd).toBeCloseTo(0.15, 9);
    expect(costOf("my-alias", { ...usage, model: "gpt-4o-mini" })?.pricedAs).toBe("gpt-4o-mini");
  });

  it("asked again (a replayed entry), answers the same figures; any field that differs is priced anew", () => {
    const base = { shape: "openai.chat" as const, inputTokens: 1_000_000, outputTokens: 0 };
    const once = costOf("gpt-4o-mini", base);
    // The same figures in a fresh object (a hit parses a new one each time).
    expect(costOf("gpt-4o-mini", { ...base })).toBe(once);
    expect(once?.usd).toBeCloseTo(0.15, 9);
    // Each field is part of what is priced: one changed at a time, right after the same figures.
    const variants: [string, Parameters<typeof costOf>[1], number][] = [
      ["gpt-4o-mini", { ...base, inputTokens: 2_000_000 }, 0.3],
      ["gpt-4o-mini", { ...base, outputTokens: 1_000_000 }, 0.75],
      ["gpt-4o-mini", { ...base, cacheReadTokens: 1_000_000 }, 0.075],
      ["gpt-4o", base, 2.5],
      ["sim-1", { ...base, model: "gpt-4o" }, 2.5],
      ["sim-1", base, Number.NaN],
    ];
    for (const [model, usage, usd] of variants) {
      expect(costOf("gpt-4o-mini", base)).toBe(once);
      const cost = costOf(model, usage);
      if (Number.isNaN(usd)) expect(cost).toBeUndefined();
      else expect(cost?.usd).toBeCloseTo(usd, 9);
    }
    const writes = { shape: "anthropic.messages" as const, inputTokens: 100_000, outputTokens: 0 };
    const plain = costOf("claude-sonnet-4-5", writes)?.usd;
    const withWrites = costOf("claude-sonnet-4-5", { ...writes, cacheWriteTokens: 100_000 })?.usd;
    expect(plain).toBeCloseTo(0.3, 9);
    expect(withWrites).toBeCloseTo(0.375, 9);
  });

  it("an unknown model has no price (tokens only, never a made-up figure)", () => {
    expect(costOf("sim-1", { shape: "openai.chat", inputTokens: 10, outputTokens: 5 })).toBe(
      undefined,
    );
    expect(costOf("", { shape: "openai.chat", inputTokens: 10, outputTokens: 5 })).toBe(undefined);
  });

  it("works with no network: fetch is never called", () => {
    const fetch = vi.fn(() => {
      throw new Error("no network in this test");
    });
    vi.stubGlobal("fetch", fetch);
    expect(
      costOf("gpt-4.1-mini", { shape: "openai.chat", inputTokens: 1000, outputTokens: 1000 })?.usd,
    ).toBeCloseTo((1000 * 0.4 + 1000 * 1.6) / 1e6, 9);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("carries the snapshot, pinned to the installed table", () => {
    const installed = JSON.parse(
      readFileSync(
        createRequire(import.meta.url)
          .resolve("@pydantic/genai-prices")
          .replace(/dist[\\/]index\.c?js$/, "package.json"),
        "utf8",
      ),
    ) as { version: string };
    expect(PRICE_SNAPSHOT.version).toBe(installed.version);
    expect(PRICE_SNAPSHOT.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies["@pydantic/genai-prices"]).toBe(PRICE_SNAPSHOT.version);
    expect(
      costOf("gpt-4o-mini", { shape: "openai.chat", inputTokens: 1, outputTokens: 1 })?.snapshot,
    ).toStrictEqual(PRICE_SNAPSHOT);
  });
});
