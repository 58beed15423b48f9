/**
 * Prices per token for each model of a session, taken from the session's own recorded cost
 * (component dollars ÷ component tokens, over all its requests), and from a small built-in table
 * of list prices only for a component the session never billed. Each component says which.
 */

import type { CacheReads } from "./cache-model.js";
import type { RecordedRequest, TokenSplit } from "./recording.js";

/** US dollars per token, by component. */
export type TokenPrices = TokenSplit;

export type PriceSource = "recorded" | "table" | "unknown";

export interface ModelPrices {
  model: string;
  prices: TokenPrices;
  source: Record<keyof TokenPrices, PriceSource>;
  /** The shortest prompt the provider caches (shorter ones are neither read nor written). */
  minCacheTokens: number;
  /** How its provider finds a cached prefix (cache-model.ts): Anthropic by breakpoints, others by longest prefix. */
  cacheReads: CacheReads;
}

interface ListPrice {
  /** Dollars per million tokens. */
  perMillion: TokenPrices;
  minCacheTokens: number;
  /** Tokens the model takes in one request. */
  contextWindow: number;
}

/**
 * List prices of the models in fixtures/real-pi-sessions. OpenAI caches with no write premium: a
 * prompt token it has not cached is billed as input, so its cacheWrite is its input price.
 */
export const LIST_PRICES: Readonly<Record<string, ListPrice>> = {
  "claude-opus-4-5": { perMillion: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }, minCacheTokens: 4096, contextWindow: 200_000 },
  "claude-sonnet-4-5": { perMillion: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, minCacheTokens: 1024, contextWindow: 200_000 },
  "gpt-5.1-codex": { perMillion: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 }, minCacheTokens: 1024, contextWindow: 400_000 },
};

/** The provider's minimum cacheable prompt where the model is not in the table. */
export const DEFAULT_MIN_CACHE_TOKENS = 1024;

/** The context window assumed where the model is not in the table (the Claude models'). */
export const DEFAULT_CONTEXT_WINDOW = 200_000;

/** The model's context window, from the table. */
export function contextWindowOf(model: string): number {
  return LIST_PRICES[model]?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
}

const COMPONENTS: readonly (keyof TokenPrices)[] = ["input", "cacheRead", "cacheWrite", "output"];

/** Prices for every model the requests name, in order of first use. */
export function sessionPrices(requests: readonly RecordedRequest[]): Map<string, ModelPrices> {
  const sums = new Map<string, { provider: string; tokens: TokenSplit; dollars: TokenSplit }>();
  for (const request of requests) {
    let sum = sums.get(request.model);
    if (sum === undefined) sums.set(request.model, (sum = { provider: request.provider, tokens: zero(), dollars: zero() }));
    if (request.cost === null) continue;
    for (const c of COMPONENTS) {
      sum.tokens[c] += request.tokens[c];
      sum.dollars[c] += request.cost[c];
    }
  }
  const prices = new Map<string, ModelPrices>();
  for (const [model, sum] of sums) prices.set(model, pricesOf(model, sum.provider, sum.tokens, sum.dollars));
  return prices;
}

function pricesOf(model: string, provider: string, tokens: TokenSplit, dollars: TokenSplit): ModelPrices {
  const list = LIST_PRICES[model];
  const cacheReads = provider === "anthropic" ? "breakpoints" : "longest-prefix";
  const result: ModelPrices = { model, prices: zero(), source: { input: "unknown", cacheRead: "unknown", cacheWrite: "unknown", output: "unknown" }, minCacheTokens: list?.minCacheTokens ?? DEFAULT_MIN_CACHE_TOKENS, cacheReads };
  for (const c of COMPONENTS) {
    if (tokens[c] > 0 && dollars[c] > 0) {
      result.prices[c] = dollars[c] / tokens[c];
      result.source[c] = "recorded";
    } else if (list !== undefined) {
      result.prices[c] = list.perMillion[c] / 1e6;
      result.source[c] = "table";
    }
  }
  return result;
}

/** Anthropic bills writes for its 1-hour cache at twice the input price (its 5-minute writes at 1.25×, as recorded). */
export const LONG_CACHE_WRITE_FACTOR = 2;

/** The prices a replay with this cache lifetime uses: a lifetime over 5 minutes writes at Anthropic's 1-hour rate. */
export function pricesForTtl(model: ModelPrices, ttlMs: number, fiveMinutesMs: number): TokenPrices {
  if (ttlMs <= fiveMinutesMs || model.cacheReads !== "breakpoints") return model.prices;
  return { ...model.prices, cacheWrite: model.prices.input * LONG_CACHE_WRITE_FACTOR };
}

export function zero(): TokenSplit {
  return { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
}
