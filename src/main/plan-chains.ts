/**
 * Planning, on the main thread and in chain order: decide each eligible chain's path (covered,
 * deterministic, skip), resolve its span, pick the outputs it will archive and reserve its `t<N>`
 * refs and `b<N>` id. Reserving here, before any worker runs, gives the numbering a serial run
 * would give whatever order the workers finish in.
 */

import { buildDeterministicBody, type BodyRecord } from "../core/deterministic-body.js";
import { spanOutputs, type SpanOutput } from "../core/extract-records.js";
import { isOccurrenceKeyOf, occurrenceKey } from "../core/occurrence-key.js";
import type { PruneState } from "../core/prune-state.js";
import type { ChainRange, DiagnosticReport, SkipReason } from "../core/prune-types.js";
import { shrinks, WOULD_GROW_CAUSE } from "../core/chain-shrink.js";
import type { AgentMessage } from "../core/session-types.js";
import type { SpanIndex } from "../core/span-index.js";
import { runSteps, stepDue, type Steps } from "../core/steps.js";
import { bodyRefusal } from "../core/body-refusal.js";
import { refusedPlan } from "./refused-chains.js";
import { planShrink, type ShrinkRender } from "./plan-shrink.js";

interface PlanBase {
  chain: ChainRange;
  /** Middle occurrence keys, or bare ids for chains without results. */
  lookupKeys: string[];
}

/** A per-batch summary covers the chain: upstream's unchanged covered path. */
export interface CoveredPlan extends PlanBase {
  kind: "covered";
  blockId: string;
}

/** No coverage: archive the planned outputs (possibly none, on a retry) and write a deterministic body. */
export interface DeterministicPlan extends PlanBase {
  kind: "deterministic";
  blockId: string;
  /** Messages strictly inside the span. Emptied once its task no longer needs them (dropInner). */
  inner: AgentMessage[];
  /** Where `inner` starts in the messages it was planned from (the file path finds their lines by it). */
  innerStart: number;
  plannedKeys: string[];
  /**
   * The planned outputs, in the same order (found once, while planning): the file path makes its
   * records from them (main/file-task-records.ts). Emptied once those are made (takeOutputs,
   * dropOutputs).
   */
  outputs: SpanOutput[];
  reservedRefs: string[];
  /** Members archived by an earlier attempt (retry discriminator). */
  indexed: BodyRecord[];
  /** toolRefs the entry will carry once the reserved refs are registered. */
  toolRefs: string[];
  /** An open chain's older outputs (main/plan-open-chain.ts): index entry only, no body, no chain entry. */
  open?: true;
}

/** Nothing to archive and nothing archived: fail-closed skip, with a diagnostic unless fully protected. */
export interface SkipPlan extends PlanBase {
  kind: "skip";
  /** Why, for the report. */
  cause: string;
  diagnostic?: DiagnosticReport;
  /** The chain's own data rules it out on every run (refused-chains.ts). */
  permanent?: true;
  /** The report's reason, when not upstream's `no-summary`. */
  reason?: SkipReason;
}

export type ChainPlan = CoveredPlan | DeterministicPlan | SkipPlan;

/*
 * A dispatched plan lets go of what only its task needs: a plan lives until its chain is committed,
 * and the span's messages and outputs would otherwise live on with it.
 */

/** Empties the plan's `inner`, once its task has them (or reads the span from the file). */
export function dropInner(plan: DeterministicPlan): void {
  plan.inner = [];
}

/** Empties the plan's `outputs`, when its records will not be made from them. */
export function dropOutputs(plan: DeterministicPlan): void {
  plan.outputs = [];
}

/** The plan's `outputs`, taken out of it: for the one caller that makes its records from them. */
export function takeOutputs(plan: DeterministicPlan): SpanOutput[] {
  const outputs = plan.outputs;
  plan.outputs = [];
  return outputs;
}

/** Plans one chain; `claimed` carries the outputs earlier chains of the pass took (call in chain order). */
export function planChain(chain: ChainRange, messages: readonly AgentMessage[], spans: SpanIndex, state: PruneState, claimed: Set<string>, render: ShrinkRender = {}): ChainPlan {
  return runSteps(planChainSteps(chain, messages, spans, state, claimed, render));
}

/**
 * planChain in steps of ITEMS_PER_STEP outputs, so that a chain of hundreds of calls never holds
 * pi's thread in one piece. Nothing else may plan or commit while it pauses: the next chain's plan
 * reads what this one claims and reserves.
 */
export function* planChainSteps(
  chain: ChainRange,
  messages: readonly AgentMessage[],
  spans: SpanIndex,
  state: PruneState,
  claimed: Set<string>,
  render: ShrinkRender = {},
): Steps<ChainPlan> {
  const lookupKeys = chain.middleOccurrenceKeys.length > 0 ? chain.middleOccurrenceKeys : chain.middleToolCallIds;
  if (state.hasSummaryCovering(lookupKeys)) return { kind: "covered", chain, lookupKeys, blockId: state.reserveBlockId() };
  const span = spans.resolve(chain);
  const innerStart = span ? span.startIndex + 1 : 0;
  const inner = span ? messages.slice(innerStart, span.endIndex) : [];
  const indexed = lookupKeys.flatMap((key) => state.records.get(key) ?? []);
  const skip = (key: string) => state.isIndexed(key) || claimed.has(key);
  const outputs: SpanOutput[] = [];
  for (const output of spanOutputs(inner, new Set(chain.protectedToolCallIds), skip, chainKeyCopies(chain.middleOccurrenceKeys))) {
    if (stepDue(outputs.push(output) - 1)) yield;
  }
  const keys = outputs.map((output) => output.key);
  if (keys.length === 0 && indexed.length === 0) return skipPlan(chain, lookupKeys);
  if (new Set(keys).size !== keys.length) {
    // Two outputs under one occurrence key (same id, same timestamp) cannot both be archived and
    // recovered by ref; dropping the span would lose one of them. Fail closed.
    return refusedPlan(chain, lookupKeys, "two outputs share an occurrence key (same tool-call id and timestamp)");
  }
  const refusal = bodyRefusal(outputs, indexed);
  if (refusal) return refusedPlan(chain, lookupKeys, refusal);
  // A chain whose compressed form would not be shorter stays as it is: nothing reserved or written.
  if (span) {
    const shrink = planShrink({ chain, messages, span, outputs, indexed, lookupKeys, state, render });
    if (!shrinks(shrink)) return { kind: "skip", chain, lookupKeys, cause: WOULD_GROW_CAUSE, reason: "would-grow" };
  }
  for (const key of keys) claimed.add(key);
  const reservedRefs = state.reserveRefs(keys.length);
  const fresh = new Map(keys.map((key, i) => [key, reservedRefs[i]!]));
  const toolRefs = lookupKeys.flatMap((key) => fresh.get(key) ?? state.refByKey.get(key) ?? []);
  const blockId = state.reserveBlockId();
  return { kind: "deterministic", chain, lookupKeys, blockId, inner, innerStart, plannedKeys: keys, outputs, reservedRefs, indexed, toolRefs };
}

/** How far past the last key found the next one is looked for (skipped results lie between). */
const KEY_LOOKAHEAD = 8;

/**
 * Each output's key as the chain's own copy of the same string. The plan's keys end up in the
 * state's maps for the rest of the run, as do the chain's: one string each instead of two. The
 * span's results come in the chain's order, so each is first looked for just past the last one
 * found, without building it; only a key not found there is built, and looked up in a map of the
 * chain's keys made then.
 */
function chainKeyCopies(chainKeys: readonly string[]): (toolCallId: string, resultTimestamp: number) => string {
  let next = 0;
  let byKey: Map<string, number> | undefined;
  return (toolCallId, resultTimestamp) => {
    const end = Math.min(chainKeys.length, next + KEY_LOOKAHEAD);
    for (let i = next; i < end; i++) {
      if (!isOccurrenceKeyOf(chainKeys[i]!, toolCallId, resultTimestamp)) continue;
      next = i + 1;
      return chainKeys[i]!;
    }
    const key = occurrenceKey(toolCallId, resultTimestamp);
    byKey ??= new Map(chainKeys.map((own, i) => [own, i]));
    const at = byKey.get(key);
    if (at === undefined) return key;
    next = at + 1;
    return chainKeys[at]!;
  };
}

function skipPlan(chain: ChainRange, lookupKeys: string[]): SkipPlan {
  const protectedIds = new Set(chain.protectedToolCallIds);
  const fullyProtected = chain.middleToolCallIds.length > 0 && chain.middleToolCallIds.every((id) => protectedIds.has(id));
  if (fullyProtected) return { kind: "skip", chain, lookupKeys, cause: "every call is protected" };
  const diagnostic: DiagnosticReport = {
    kind: "backfill-empty",
    dedupKey: String(chain.startUserTimestamp),
    detail: `middles=${chain.middleToolCallIds.length}`,
  };
  return { kind: "skip", chain, lookupKeys, cause: "nothing to archive in the span", diagnostic };
}

/** The body of a retry that archives nothing new: composed on the main thread from the index. */
export function retryBody(plan: DeterministicPlan): string {
  return buildDeterministicBody(plan.indexed, plan.toolRefs);
}
