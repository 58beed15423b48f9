/**
 * What a flush of the eligible chains would change in the context, estimated before anything is
 * planned or reserved: the tokens it takes out of every later request, and the tokens the next
 * request must write again from the first compressed chain on (core/flush-trigger.ts weighs them).
 * Shared by the live flush and its replay, so both decide alike. Measured on the branch's messages
 * as they are (an output an open-chain step archived counts whole), in billed characters / 4; the
 * compressed message counts as CHAIN_MESSAGE_CHARS plus CALL_LINE_CHARS per call. Estimates: the
 * replay (`chainpress cost`) measures what a decision actually cost.
 */

import { CHARS_PER_TOKEN } from "../core/defaults.js";
import { DEFAULT_CACHE_PRICE_RATIOS, PI_COMPACTION_RESERVE_TOKENS, type FlushMoment } from "../core/flush-trigger.js";
import type { ChainRange } from "../core/prune-types.js";
import { droppedInsideSpan } from "../core/render/chain-ranges.js";
import type { AgentMessage } from "../core/session-types.js";
import { SpanIndex } from "../core/span-index.js";
import { runSteps } from "../core/steps.js";

/** The `<compressed-chain>` message without its calls, and each call's body and map lines. */
const CHAIN_MESSAGE_CHARS = 400;
const CALL_LINE_CHARS = 200;

export interface FlushGain {
  savedTokens: number;
  rewriteTokens: number;
}

/** `charsOf`: a message's billed characters (main/message-chars.ts, or a measure equal to it). */
export function flushGain(messages: readonly AgentMessage[], eligible: readonly ChainRange[], charsOf: (message: AgentMessage) => number): FlushGain {
  const spans = runSteps(SpanIndex.steps(messages, eligible));
  let saved = 0;
  let first = messages.length;
  for (const chain of eligible) {
    const span = spans.resolve(chain);
    if (!span) continue;
    first = Math.min(first, span.startIndex + 1);
    let dropped = 0;
    for (let k = span.startIndex + 1; k < span.endIndex; k++) {
      const message = messages[k]!;
      if (droppedInsideSpan(message)) dropped += charsOf(message);
    }
    saved += Math.max(0, dropped - CHAIN_MESSAGE_CHARS - CALL_LINE_CHARS * chain.middleOccurrenceKeys.length);
  }
  let tail = 0;
  for (let k = first; k < messages.length; k++) tail += charsOf(messages[k]!);
  return { savedTokens: Math.floor(saved / CHARS_PER_TOKEN), rewriteTokens: Math.max(0, Math.ceil((tail - saved) / CHARS_PER_TOKEN)) };
}

/** What the decision knows besides the gain. */
export interface FlushContext {
  cacheCold: boolean;
  /** Billed characters of the context at the last request. */
  contextChars: number;
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** The model's prices per token (or per million: only their ratios count); all 0 when unknown. */
  prices: { input: number; cacheRead: number; cacheWrite: number };
}

export function flushMoment(gain: FlushGain, context: FlushContext): FlushMoment {
  const { input, cacheRead, cacheWrite } = context.prices;
  return {
    ...gain,
    cacheCold: context.cacheCold,
    contextTokens: Math.ceil(context.contextChars / CHARS_PER_TOKEN),
    compactAtTokens: Math.max(0, context.contextWindow - PI_COMPACTION_RESERVE_TOKENS),
    prices: input > 0 && cacheWrite > 0 ? { cacheRead: cacheRead / input, cacheWrite: cacheWrite / input } : DEFAULT_CACHE_PRICE_RATIOS,
  };
}
