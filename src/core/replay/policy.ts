/**
 * What a replay compares: policies, each giving the context of every request. `as-run` is the
 * recording's own contexts: pi's compactions and context edits as they happened. Any other
 * policy is a ContextSource: it gives, request by request, how its context follows from its
 * previous one, so an incremental policy costs what it changes, not the whole context each time.
 * A source decides how it treats pi's compactions: the recording's branch holds them, and each
 * request's `entryIndex` places it among them. Its contexts are what the provider is sent
 * (`sentMessages`).
 */

import type { AgentMessage } from "../session-types.js";
import type { TokenPrices } from "./prices.js";
import type { Recording } from "./recording.js";

/**
 * The context of one request: the first `keep` messages of the policy's previous context (0 for
 * the first request), then `append`. A message object the recording holds keeps its calibrated
 * tokens; any other (a compressed chain, a stub) is known by its JSON text and estimated.
 */
export interface ContextStep {
  keep: number;
  append: readonly AgentMessage[];
  /** Chains this step compresses (a compression event when > 0; its figures are reported). */
  compressedChains?: number;
}

/** What a policy may know of the replay besides the recording: what a live policy would know of its provider. */
export interface ReplayEnvironment {
  /** The replay's cache lifetime. */
  cacheTtlMs: number;
  /** Per token, what a request to `model` pays (the lifetime's write price applied). */
  pricesOf(model: string): TokenPrices;
  /** Tokens the model takes in one request. */
  contextWindowOf(model: string): number;
}

export interface ContextSource {
  /** Its name in reports. */
  readonly name: string;
  /** One step per request of `recording.requests` (billed or not), in order. */
  steps(recording: Recording, environment: ReplayEnvironment): Iterable<ContextStep>;
}

export type ReplayPolicy = { kind: "as-run" } | { kind: "source"; source: ContextSource };

export function policyName(policy: ReplayPolicy): string {
  return policy.kind === "as-run" ? "as-run" : policy.source.name;
}

/**
 * The step from `previous` to `next`, both whole contexts: `keep` is the prefix whose message
 * objects are the same. For policies that render whole contexts (linear in the context, so a
 * replay of them grows with requests × context).
 */
export function stepBetween(previous: readonly AgentMessage[], next: readonly AgentMessage[], compressedChains = 0): ContextStep {
  let keep = 0;
  while (keep < previous.length && keep < next.length && previous[keep] === next[keep]) keep++;
  return { keep, append: next.slice(keep), compressedChains };
}
