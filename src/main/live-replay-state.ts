/**
 * What the live extension would have written to its PruneState, without writing anything: the
 * closed-chain flush and the open-chain step, planned by the extension's own planners
 * (plan-chains.ts, plan-open-chain.ts) and committed into the state in the commit's order (records,
 * refs, then the chain entry), with the records and bodies built by the core builders the worker
 * uses. Spill files are not written: a record over the spill threshold carries the spill fields
 * the stub reads (its byte size and a path), since only stubs and bodies reach the context.
 * Here in main/ because the planners are main-thread code; nothing here does I/O.
 */

import { nonTextParts, type ArchivedPart } from "../core/archived-parts.js";
import { buildBackfilledRecord, buildChainEntry, buildRef, type PartsFields, type SpillFields } from "../core/chain-entry.js";
import { buildDeterministicBody } from "../core/deterministic-body.js";
import { detectChains, detectOpenChain } from "../core/detect-chains.js";
import { outputFields, type SpanOutput } from "../core/extract-records.js";
import { isSyntheticChainMessage, toolCallParts } from "../core/message-text.js";
import type { ProtectionPredicate } from "../core/protection.js";
import type { PruneState } from "../core/prune-state.js";
import type { ChainRange, ToolCallRecord } from "../core/prune-types.js";
import { recoveryGraceKeys, selectEligible } from "../core/select-eligible.js";
import type { ChainpressSettings } from "../core/settings.js";
import type { AgentMessage, ToolResultMessage } from "../core/session-types.js";
import type { OpenChainSettings } from "../core/open-chain-policy.js";
import { SpanIndex } from "../core/span-index.js";
import { shouldSpill } from "../core/spill-rule.js";
import { runSteps } from "../core/steps.js";
import { planChain, type DeterministicPlan } from "./plan-chains.js";
import { openOutputTokens, planOpenChain } from "./plan-open-chain.js";

export interface LiveSettings {
  settings: ChainpressSettings;
  isProtected: ProtectionPredicate;
}

/**
 * The live flush's trigger (extension/live-flush.ts `handleMessageEnd`): a reply with no tool
 * call closes its chain, unless it failed (stopReason error or length), which pi may omit.
 */
export function flushesAfter(message: AgentMessage): boolean {
  if (message.role !== "assistant" || toolCallParts(message).length > 0) return false;
  const stopReason = (message as { stopReason?: unknown }).stopReason;
  return stopReason !== "error" && stopReason !== "length";
}

/**
 * The chains the flush after the closing reply, the last of `messages` (the branch's messages up
 * to it), would compress (extension/compress-pass.ts `eligibleCount`).
 */
export function flushEligible(messages: AgentMessage[], state: PruneState, live: LiveSettings, detected: DetectedChains): ChainRange[] {
  const { settings } = live;
  if (!settings.enabled || !settings.chainCompression.enabled) return [];
  const chains = detected.upTo(messages, live.isProtected);
  // As passInput: grace from the persisted branch, without the closing reply (an assistant
  // message, which grace does not count).
  const graceKeys = recoveryGraceKeys(messages.slice(graceStart(messages, settings.recoveryGraceTurns)), settings.recoveryGraceTurns);
  return selectEligible(chains, settings.chainCompression.rollingWindow, (start) => state.isCompressed(start), graceKeys);
}

/** The flush of `eligible` (flushEligible's) over `messages` (main/compress-eligible.ts), at `now`: the chains it compressed. */
export function simulateFlush(messages: AgentMessage[], eligible: readonly ChainRange[], state: PruneState, live: LiveSettings, now: number): number {
  const { settings } = live;
  if (eligible.length === 0) return 0;
  const spans = runSteps(SpanIndex.steps(messages, eligible));
  const claimed = new Set<string>();
  const plans = eligible.map((chain) => planChain(chain, messages, spans, state, claimed));
  let compressed = 0;
  for (const plan of plans) {
    if (plan.kind === "skip") continue;
    if (plan.kind === "deterministic") commitRecords(plan, state, settings);
    const toolRefs = state.refsForKeys(plan.lookupKeys);
    const base = { chain: plan.chain, blockId: plan.blockId, toolRefs, compressedAt: now };
    const body = plan.kind === "deterministic" ? buildDeterministicBody([...plan.indexed, ...recordsOf(plan, state)], plan.toolRefs) : undefined;
    state.registerChain(buildChainEntry(body === undefined ? { ...base, deterministic: false } : { ...base, rangeSummaryText: body, deterministic: true }));
    compressed++;
  }
  return compressed;
}

/**
 * detectChains over a branch that only grows, in pieces: a real user message starts a chain
 * afresh, so the chains before the last one found stay as they are, and each call scans from the
 * start of that last chain on. `reset` when the branch's messages were rebuilt (a context edit).
 */
export class DetectedChains {
  private final: ChainRange[] = [];
  /** Where the last chain found starts (a real user message), or 0. */
  private from = 0;

  reset(): void {
    this.final = [];
    this.from = 0;
  }

  /** detectChains(messages) for `messages`, which extend those of the previous call. */
  upTo(messages: readonly AgentMessage[], isProtected: ProtectionPredicate): ChainRange[] {
    const tail = detectChains(messages.slice(this.from), isProtected);
    const all = [...this.final, ...tail];
    let last = messages.length - 1;
    while (last >= this.from && !(messages[last]!.role === "user" && !isSyntheticChainMessage(messages[last]!))) last--;
    if (last > this.from) {
      // Every chain starts at a real user message: the one starting at `last`, if found, is the last.
      const kept = tail.length - 1;
      if (kept > 0 && tail[kept]!.startUserTimestamp === messages[last]!.timestamp) {
        this.final.push(...tail.slice(0, kept));
        this.from = last;
      }
    }
    return all;
  }
}

/**
 * Where counting recovery grace may start: results before the user message that has more than
 * `graceTurns` user messages from it to the end are older than the grace (select-eligible.ts), so
 * recoveryGraceKeys gives the same keys from there.
 */
function graceStart(messages: readonly AgentMessage[], graceTurns: number): number {
  if (!(graceTurns > 0) || !Number.isFinite(graceTurns)) return 0;
  let users = 0;
  for (let k = messages.length - 1; k >= 0; k--) {
    if (messages[k]!.role === "user" && ++users > Math.floor(graceTurns)) return k;
  }
  return 0;
}

/**
 * The open-chain step after a tool turn (extension/open-chain-step.ts): archives older outputs of
 * the chain still open at the end of `messages`; true when it archived any.
 */
export function simulateOpenStep(messages: AgentMessage[], state: PruneState, live: LiveSettings, tally?: OpenChainTally): boolean {
  const { settings } = live;
  if (!settings.enabled || !settings.openChains.enabled) return false;
  if (tally !== undefined && !tally.mayTrigger(settings.openChains)) return false;
  const open = detectOpenChain(messages, live.isProtected);
  if (!open) return false;
  // The step reads grace only for the open chain's outputs, all after its user message: counted
  // from there they are as old as counted over the branch (0 turns), and the cost stays the chain's.
  const graceKeys = recoveryGraceKeys(messages.slice(open.startIndex), settings.recoveryGraceTurns);
  const { plan } = planOpenChain(open, messages, state, graceKeys, settings.openChains);
  if (!plan) return false;
  tally?.archived(plan.outputs.map((output) => output.result));
  commitRecords(plan, state, settings);
  return true;
}

/**
 * The open chain's outputs as planOpenChain lists them (spanOutputs over the messages after the
 * last real user message), kept as the branch grows, with those a step archived. While the tokens
 * of the ones outside the keep window and not archived stay within the trigger, no step can
 * happen (decideOpenChain's first test), and the replay skips planning one: that planning, at
 * every request of a long open chain, made the replay grow with the square of the chain. Exact
 * while the branch only grows; a rebuilt branch (a context edit) turns it off until the next real
 * user message.
 */
export class OpenChainTally {
  private calls = new Set<string>();
  private results: ToolResultMessage[] = [];
  private archivedResults = new Set<object>();
  private exact = true;
  /** The first `counted` results, and the tokens of those not archived: kept as the keep window moves on. */
  private counted = 0;
  private outsideTokens = 0;

  add(message: AgentMessage): void {
    if (message.role === "user" && !isSyntheticChainMessage(message)) {
      this.calls = new Set();
      this.results = [];
      this.archivedResults = new Set();
      this.exact = true;
      this.counted = 0;
      this.outsideTokens = 0;
    } else if (message.role === "assistant") {
      for (const call of toolCallParts(message)) if (typeof call.id === "string" && call.id !== "" && typeof call.name === "string") this.calls.add(call.id);
    } else if (message.role === "toolResult") {
      const result = message as ToolResultMessage;
      if (typeof result.toolCallId === "string" && this.calls.has(result.toolCallId) && typeof result.timestamp === "number") this.results.push(result);
    }
  }

  /** The branch was rebuilt: plan at every request until the next real user message. */
  invalidate(): void {
    this.exact = false;
  }

  /** A step archived these results, all outside the keep window (so already counted). */
  archived(results: readonly ToolResultMessage[]): void {
    for (const result of results) {
      if (this.archivedResults.has(result)) continue;
      this.archivedResults.add(result);
      this.outsideTokens -= openOutputTokens(result);
    }
  }

  /** False when a step cannot trigger now. */
  mayTrigger(settings: OpenChainSettings): boolean {
    if (!this.exact) return true;
    const outside = this.results.length - Math.max(0, settings.keepRecent);
    for (; this.counted < outside; this.counted++) {
      const result = this.results[this.counted]!;
      if (!this.archivedResults.has(result)) this.outsideTokens += openOutputTokens(result);
    }
    return this.outsideTokens > settings.triggerTokens;
  }
}

/** The records of the plan's outputs, indexed, then their refs registered (commit-group.ts's order). */
function commitRecords(plan: DeterministicPlan, state: PruneState, settings: ChainpressSettings): void {
  const records = plan.outputs.map((output) => recordOf(output, settings));
  records.forEach((record, i) => state.indexRecord(record, { seedDedup: false }, plan.plannedKeys[i]));
  records.forEach((record, i) => state.registerRef(buildRef(plan.reservedRefs[i]!, record.toolCallId, record.resultTimestamp), plan.plannedKeys[i]));
}

/** The plan's newly archived records, as the state now holds them (for the body). */
function recordsOf(plan: DeterministicPlan, state: PruneState): ToolCallRecord[] {
  return plan.plannedKeys.flatMap((key) => state.records.get(key) ?? []);
}

/** A backfilled record as the worker builds it (workers/archive-records.ts), minus what no render reads (hashes, preview, digest). */
function recordOf(output: SpanOutput, settings: ChainpressSettings): ToolCallRecord {
  const fields = outputFields(output);
  const spill: SpillFields | undefined = shouldSpill(fields.resultText, settings.spillThreshold)
    ? { spillBytes: Buffer.byteLength(fields.resultText, "utf8"), resultPreview: "", spillPath: `${fields.toolCallId}-${fields.resultTimestamp}.txt`, contentHash: "", spillDigest: "" }
    : undefined;
  const found = nonTextParts(output.result.content);
  const parts: PartsFields | undefined = found.length === 0 ? undefined : { contentHash: "", parts: found.map(({ at, part }): ArchivedPart => ({ at, kind: "inline", part })) };
  return buildBackfilledRecord(fields, spill, parts);
}
