/**
 * The live flush's trigger in the "chainpress live" replay (main/live-replay-source.ts), as the
 * extension applies it (extension/flush-timing.ts): decided as each reply ends, with the cache
 * warm; a flush deferred then is decided again once the cache has expired (the extension's timer),
 * unless a request went out before. The same estimate (main/flush-gain.ts) and rule
 * (core/flush-trigger.ts) as live, on the recording's times, models and prices. No I/O.
 */

import { flushNow, type FlushTrigger } from "../core/flush-trigger.js";
import type { PruneState } from "../core/prune-state.js";
import type { MessageTable } from "../core/replay/message-table.js";
import type { ReplayEnvironment } from "../core/replay/policy.js";
import { flushTriggerOf } from "../core/settings.js";
import type { AgentMessage } from "../core/session-types.js";
import { flushGain, flushMoment } from "./flush-gain.js";
import { flushEligible, simulateFlush, type DetectedChains, type LiveSettings } from "./live-replay-state.js";
import { billedCharsOf, type MessageChars } from "./message-chars.js";

/** The branch as the replay has grown it so far. */
export interface GrownBranch {
  readonly branchMessages: AgentMessage[];
  readonly chains: DetectedChains;
}

/**
 * The flush's trigger as the extension applies it (extension/live-flush.ts): decided as each reply
 * ends, with the cache warm; a flush deferred then is decided again once the cache has expired
 * (the extension's timer), unless a request went out before.
 */
export class FlushDecisions {
  /** Something was compressed or archived since the last render. */
  stale = true;
  /** Chains compressed since the last request. */
  chains = 0;
  /** Billed characters of the context last sent. */
  contextChars = 0;
  /** Billed characters of a message: the recording's own measure of its messages (the same), else measured once. */
  readonly charsOf: (message: AgentMessage) => number;
  private readonly trigger: FlushTrigger;
  private readonly ttlMs: number;
  private deferred = false;
  private lastRequest: { time: number; model: string } | undefined;

  constructor(
    private readonly live: LiveSettings,
    private readonly environment: ReplayEnvironment,
    private readonly state: PruneState,
    private readonly pi: GrownBranch,
    table: MessageTable,
  ) {
    const measured: MessageChars = new WeakMap();
    this.charsOf = (message) => table.charsOfOwn(message) ?? billedCharsOf(message, measured);
    this.trigger = flushTriggerOf(live.settings.chainCompression);
    this.ttlMs = live.settings.chainCompression.cacheTtlSeconds * 1000;
  }

  replyEnded(at: number): void {
    this.decide(false, at);
  }

  /** The timer of a deferred flush, if it fired before `time`. */
  coldBy(time: number | undefined): void {
    if (!this.deferred || this.lastRequest === undefined || time === undefined) return;
    const firesAt = this.lastRequest.time + this.ttlMs;
    if (time > firesAt) this.decide(true, firesAt);
  }

  requestSent(time: number, model: string): void {
    this.lastRequest = { time, model };
    this.chains = 0;
    this.stale = false;
  }

  private decide(cacheCold: boolean, at: number): void {
    const { pi, state, live } = this;
    const eligible = flushEligible(pi.branchMessages, state, live, pi.chains);
    this.deferred = false;
    if (eligible.length === 0) return;
    if (this.trigger.kind !== "each-reply") {
      const model = this.lastRequest?.model ?? "";
      const moment = flushMoment(flushGain(pi.branchMessages, eligible, this.charsOf), {
        cacheCold,
        contextChars: this.contextChars,
        contextWindow: this.environment.contextWindowOf(model),
        prices: this.environment.pricesOf(model),
      });
      if (!flushNow(this.trigger, moment)) {
        this.deferred = true;
        return;
      }
    }
    const compressed = simulateFlush(pi.branchMessages, eligible, state, live, at);
    this.chains += compressed;
    if (compressed > 0) this.stale = true;
  }
}

