/**
 * When the live flush compresses the closed chains past the rolling window (issue 47). Every
 * compression rewrites the provider's prompt cache from the first compressed chain on: the next
 * request writes that tail at the cache-write price instead of reading it at the cache-read price
 * (Anthropic: 1.25× and 0.1× the input price). So compressing pays only once enough later requests
 * have read the smaller prompt, and it costs nothing extra when the cache has expired anyway.
 * The triggers compared by `npm run bench:policy` are the kinds below; the chosen default is
 * DEFAULT_FLUSH_TRIGGER. Pure.
 */

/** The triggers a setting can name. */
export const FLUSH_TRIGGERS = ["each-reply", "when-it-pays", "cold-cache", "pressure"] as const;
export type FlushTriggerName = (typeof FLUSH_TRIGGERS)[number];

export type FlushTrigger =
  /** Compress as each reply ends (upstream's rule). */
  | { kind: "each-reply" }
  /** Compress when the saved reads over the next `paybackRequests` requests exceed the rewrite's extra cost. */
  | { kind: "when-it-pays"; paybackRequests: number; pressureShare: number }
  /** Compress only while the prompt cache has expired (or under pressure). */
  | { kind: "cold-cache"; pressureShare: number }
  /** Compress only when the context nears pi's own compaction threshold. */
  | { kind: "pressure"; pressureShare: number };

/** What a decision knows; token counts are estimates (characters / 4), as pi estimates. */
export interface FlushMoment {
  /** The provider's cache has expired: the time since the last request exceeds its lifetime. */
  cacheCold: boolean;
  /** Tokens the flush takes out of every later request. */
  savedTokens: number;
  /** Tokens the next request must write after the flush: the context from the first compressed chain on, compressed. */
  rewriteTokens: number;
  /** The context's tokens at the last request. */
  contextTokens: number;
  /** Where pi compacts: the model's context window minus its reserve. */
  compactAtTokens: number;
  /** Cache-read and cache-write prices as multiples of the input price. */
  prices: CachePriceRatios;
}

export interface CachePriceRatios {
  cacheRead: number;
  cacheWrite: number;
}

/** Anthropic's ratios (5-minute cache): the fallback when the model's prices are not known. */
export const DEFAULT_CACHE_PRICE_RATIOS: CachePriceRatios = { cacheRead: 0.1, cacheWrite: 1.25 };

/** pi compacts when the context exceeds the window minus this reserve (pi's `reserveTokens` default). */
export const PI_COMPACTION_RESERVE_TOKENS = 16_384;

/** True when the flush should run now. */
export function flushNow(trigger: FlushTrigger, moment: FlushMoment): boolean {
  // At each reply the planner's own would-grow check is the only filter (today's flush).
  if (trigger.kind === "each-reply") return true;
  if (moment.savedTokens <= 0) return false;
  switch (trigger.kind) {
    case "when-it-pays":
      return underPressure(trigger.pressureShare, moment) || paysWithin(trigger.paybackRequests, moment);
    case "cold-cache":
      return moment.cacheCold || underPressure(trigger.pressureShare, moment);
    case "pressure":
      return underPressure(trigger.pressureShare, moment);
  }
}

/**
 * The extra the next request pays (writing the compressed tail instead of reading the whole one;
 * nothing when the cache is cold, since everything is written anyway), against the reads saved
 * over `requests` requests.
 */
export function paysWithin(requests: number, moment: FlushMoment): boolean {
  const { cacheRead, cacheWrite } = moment.prices;
  const before = moment.rewriteTokens + moment.savedTokens;
  const extra = moment.cacheCold ? (moment.rewriteTokens - before) * cacheWrite : moment.rewriteTokens * cacheWrite - before * cacheRead;
  return requests * moment.savedTokens * cacheRead >= extra;
}

function underPressure(share: number, moment: FlushMoment): boolean {
  return moment.compactAtTokens > 0 && moment.contextTokens >= share * moment.compactAtTokens;
}
