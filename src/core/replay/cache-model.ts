/**
 * The prompt cache as a replay models it. A request can read what the request before it left
 * cached, if that one used the same model and came within the cache's lifetime; it writes the
 * rest, except an uncached tail billed as input. A prompt shorter than the model's minimum is
 * neither read nor written, and so is a cached prefix shorter than it.
 *
 * What it can read depends on the provider (`CacheReads`):
 * - "breakpoints" (Anthropic): pi marks cache breakpoints after the system prompt and tools and at
 *   the prompt's end, and the provider finds a cached prefix only where an earlier request put a
 *   breakpoint (looking back a few blocks). So a request reads the previous request's whole cached
 *   prompt when that is a prefix of its own, else only the system prompt and tools (`base`).
 *   A rewrite in the middle of the context is written again from the start of the messages.
 * - "longest-prefix" (OpenAI's automatic caching): the longest shared prefix.
 * Anthropic also voids cached messages when thinking parameters change; the real sessions do not
 * bear that out as a rule (of 8 requests after pi's thinking level changed, 2 read the cache), so
 * it is not modelled: the check (as-run-check.ts) names those misses.
 *
 * Lost caches: in the real sessions the provider lost the cache at a few requests that follow a
 * user's prompt (4 to 43% of them), and almost never within a tool loop. A replay takes the
 * share of what those could read that the session lost (user-turn-misses.ts) as an expectation: at a request after a user's prompt it reads `(1 − share) × what it could read +
 * share × what a lost cache leaves` (the system prompt and tools at most), for every policy alike.
 *
 * The tail: the provider bills a few tokens after the last breakpoint as input (1 to 10 in the
 * real sessions). A replay uses the session's typical (median) recorded input among requests that
 * read the cache, for every policy alike.
 */

import type { RecordedRequest, TokenSplit } from "./recording.js";

export const CACHE_TTL_5M_MS = 5 * 60 * 1000;
export const CACHE_TTL_1H_MS = 60 * 60 * 1000;

export type CacheReads = "breakpoints" | "longest-prefix";

/** What a request left in the cache, for the next one. */
export interface CacheMark {
  time: number;
  model: string;
  /** Tokens of its prompt that are cached (from the start). */
  cachedTokens: number;
}

export interface CacheRequest {
  time: number;
  model: string;
  promptTokens: number;
  /** Tokens of the prefix it shares with the request before it (the system prompt and tools included). */
  sharedTokens: number;
  /** Tokens of the system prompt and tools. */
  baseTokens: number;
  /** The chance that the provider lost its cache before this request. */
  lostChance: number;
}

export interface CacheRules {
  ttlMs: number;
  uncachedTail: number;
  minCacheTokens: number;
  reads: CacheReads;
}

/** The request's prompt tokens as input, cache read and cache write, and what it leaves cached. */
export function cacheSplit(request: CacheRequest, previous: CacheMark | undefined, rules: CacheRules): { split: Omit<TokenSplit, "output">; mark: CacheMark } {
  const { time, model, promptTokens: prompt } = request;
  if (prompt < rules.minCacheTokens) return { split: { input: prompt, cacheRead: 0, cacheWrite: 0 }, mark: { time, model, cachedTokens: 0 } };
  const warm = previous !== undefined && previous.model === model && time - previous.time <= rules.ttlMs;
  const read = warm ? atMinimum(readableTokens(request, previous.cachedTokens, rules.reads), rules) : 0;
  const lost = atMinimum(Math.min(request.baseTokens, read), rules);
  const cacheRead = request.lostChance === 0 ? read : (1 - request.lostChance) * read + request.lostChance * lost;
  const input = Math.min(rules.uncachedTail, prompt - cacheRead);
  return { split: { input, cacheRead, cacheWrite: prompt - cacheRead - input }, mark: { time, model, cachedTokens: prompt - input } };
}

/** A cached prefix shorter than the model's minimum is not cached. */
function atMinimum(tokens: number, rules: CacheRules): number {
  return tokens >= rules.minCacheTokens ? tokens : 0;
}

function readableTokens(request: CacheRequest, cached: number, reads: CacheReads): number {
  if (reads === "longest-prefix") return Math.min(request.sharedTokens, cached);
  return request.sharedTokens >= cached ? cached : Math.min(request.baseTokens, request.sharedTokens, cached);
}

/** The median recorded input of the billed requests that read the cache; 0 when none did. */
export function typicalTail(requests: readonly RecordedRequest[]): number {
  const tails = requests.filter((r) => r.billed && r.tokens.cacheRead > 0).map((r) => r.tokens.input);
  if (tails.length === 0) return 0;
  tails.sort((a, b) => a - b);
  return tails[Math.floor(tails.length / 2)]!;
}
