/**
 * When the live flush compresses (the `chainCompression.trigger` setting, core/flush-trigger.ts).
 * The context handler notes each request as it goes out (its time, model and rendered size); the
 * flush, as a reply ends, weighs what compressing would save against the cache it would rewrite.
 * A flush deferred then is decided again when the cache has expired: a timer fires once the
 * lifetime has passed since the last request, unless another request went out first (then the
 * next reply decides). main/live-replay-source.ts replays exactly this, so `chainpress cost`
 * measures what these decisions cost.
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { flushNow } from "../core/flush-trigger.js";
import type { ChainRange } from "../core/prune-types.js";
import { contextWindowOf } from "../core/replay/prices.js";
import type { AgentMessage } from "../core/session-types.js";
import { flushTriggerOf, type ChainCompressionSettings } from "../core/settings.js";
import { flushGain, flushMoment } from "../main/flush-gain.js";
import { billedCharsOf } from "../main/message-chars.js";
import type { Chainpress } from "./runtime.js";

/** What the flush knows of the last request. */
export interface LastRequest {
  time: number;
  /** Billed characters of the rendered context it sent. */
  contextChars: number;
  contextWindow: number;
  /** The model's prices (per million tokens; only their ratios count), all 0 when unknown. */
  prices: { input: number; cacheRead: number; cacheWrite: number };
}

/** Called as a request goes out with `rendered`: the cache is warm again, so a pending cold flush waits for the next reply. */
export function noteRequest(runtime: Chainpress, rendered: readonly AgentMessage[], ctx: ExtensionContext): void {
  cancelColdFlush(runtime);
  let contextChars = 0;
  for (const message of rendered) contextChars += billedCharsOf(message, runtime.messageChars);
  const model = ctx.model;
  const cost = model?.cost;
  runtime.lastRequest = {
    time: Date.now(),
    contextChars,
    contextWindow: model?.contextWindow ?? contextWindowOf(model?.id ?? ""),
    prices: cost ? { input: cost.input, cacheRead: cost.cacheRead, cacheWrite: cost.cacheWrite } : { input: 0, cacheRead: 0, cacheWrite: 0 },
  };
}

/** The flush's decision: run now, or wait (for the cache to expire, when it is warm now). */
export type FlushDue = { run: true } | { run: false; cacheCold: boolean };

/** Whether the flush of `eligible` over `messages` runs now. */
export function flushDue(runtime: Chainpress, messages: readonly AgentMessage[], eligible: readonly ChainRange[]): FlushDue {
  const trigger = flushTriggerOf(runtime.settings.chainCompression);
  const cacheTtlMs = ttlMsOf(runtime.settings.chainCompression);
  if (trigger.kind === "each-reply") return { run: true };
  const last = runtime.lastRequest;
  const cacheCold = last === undefined || Date.now() - last.time > cacheTtlMs;
  const moment = flushMoment(flushGain(messages, eligible, (message) => billedCharsOf(message, runtime.messageChars)), {
    cacheCold,
    contextChars: last?.contextChars ?? 0,
    contextWindow: last?.contextWindow ?? contextWindowOf(""),
    prices: last?.prices ?? { input: 0, cacheRead: 0, cacheWrite: 0 },
  });
  return flushNow(trigger, moment) ? { run: true } : { run: false, cacheCold };
}

/**
 * After a deferred flush: run it again once the cache has expired. `flush` is the live flush with
 * no closing reply (everything is persisted by then). The timer does not keep pi running.
 */
export function scheduleColdFlush(runtime: Chainpress, flush: () => Promise<void>): void {
  cancelColdFlush(runtime);
  const last = runtime.lastRequest;
  if (last === undefined) return;
  const wait = Math.max(0, last.time + ttlMsOf(runtime.settings.chainCompression) - Date.now()) + 1;
  const timer = setTimeout(() => {
    if (runtime.coldFlushTimer === timer) runtime.coldFlushTimer = undefined;
    void flush();
  }, wait);
  timer.unref();
  runtime.coldFlushTimer = timer;
}

function ttlMsOf(settings: ChainCompressionSettings): number {
  return settings.cacheTtlSeconds * 1000;
}

export function cancelColdFlush(runtime: Chainpress): void {
  if (runtime.coldFlushTimer !== undefined) clearTimeout(runtime.coldFlushTimer);
  runtime.coldFlushTimer = undefined;
}
