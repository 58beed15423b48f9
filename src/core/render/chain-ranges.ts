/**
 * Render phase 3 (reference §6.3): every registered chain whose span still resolves in the
 * current messages is replaced by one synthetic `<compressed-chain>` user message placed right
 * after the chain's opening user message. Pure and linear in the messages: the span index is
 * built once, accepted spans never overlap, and emission is a single pass. Input messages are
 * never mutated; the input array is returned when nothing changed.
 */

import { CUSTOM_TYPE_SUMMARY } from "../custom-types.js";
import { contentText, toolCallParts } from "../message-text.js";
import { bareToolCallId, occurrenceKey, resultTimestampOf } from "../occurrence-key.js";
import type { PruneState } from "../prune-state.js";
import type { ChainCompressionEntry, DiagnosticReport } from "../prune-types.js";
import { summaryRefs } from "../reconstruct.js";
import type { AgentMessage, ContentPart, ToolResultMessage, UserMessage } from "../session-types.js";
import { SpanIndex } from "../span-index.js";
import { MapAllowance, type MapBudget } from "../archive-map.js";
import { runSteps, stepDue, StepBudget, type Steps } from "../steps.js";
import { blockBodyLookup, buildSyntheticChainMessage, chainBody, mapCallCount, mapCallsOf, presentSyntheticIds, type ProtectedOutput } from "./chain-message.js";

export interface ChainRenderOptions {
  /** The closing assistant keeps only its non-thinking blocks (default true, as upstream). */
  stripFinalAssistantThinking?: boolean;
  /**
   * Compare each range's recorded ids with the ids its span holds, for the range-id-mismatch
   * report (default true). A caller that drops the diagnostics (a context measure) spares the
   * two sets of ids per range, per render.
   */
  checkRecordedIds?: boolean;
  /** The archive map under each chain's body (core/archive-map.ts); none without a budget. */
  map?: MapBudget;
  /** Outputs a context edit changed (core/context-edits.ts editedOutputs): the map marks none of them as holding images. */
  editedOutputs?: ReadonlyMap<string, unknown>;
}

export interface ChainRenderResult {
  /** The rendered messages; the input array itself when nothing changed. */
  messages: AgentMessage[];
  /** unresolved-range and range-id-mismatch reports, not yet deduplicated. */
  diagnostics: DiagnosticReport[];
}

/** A chain entry whose span resolved and does not collide with another span. */
export interface AcceptedRange {
  entry: ChainCompressionEntry;
  /** Index of the opening user message. */
  startIndex: number;
  /** Index of the closing assistant message. */
  endIndex: number;
}

// ---------------------------------------------------------------------------------------------
// Planning: which entries apply.

/**
 * Resolve the entries and keep the ones that can be applied. An unresolvable entry, one that
 * starts strictly inside another resolved span, or one whose start was already claimed is
 * skipped with an `unresolved-range` report: applying it would drop messages twice or drop
 * messages the entry never described (fail-closed). Accepted spans are therefore disjoint.
 */
export function planChainRanges(index: SpanIndex, entries: Iterable<ChainCompressionEntry>, diagnostics: DiagnosticReport[]): AcceptedRange[] {
  return runSteps(planChainRangesSteps(index, entries, diagnostics));
}

/** planChainRanges, pausable (core/steps.ts): a session of thousands of chains resolves thousands of spans. */
export function* planChainRangesSteps(index: SpanIndex, entries: Iterable<ChainCompressionEntry>, diagnostics: DiagnosticReport[]): Steps<AcceptedRange[]> {
  const resolved: AcceptedRange[] = [];
  let count = 0;
  for (const entry of entries) {
    if (stepDue(count++)) yield;
    const span = index.resolve(entry);
    if (span) resolved.push({ entry, ...span });
    else diagnostics.push(unresolvedReport(entry));
  }
  // Stable sort: among equal starts the earlier-registered entry claims the slot.
  resolved.sort((a, b) => a.startIndex - b.startIndex);
  const accepted: AcceptedRange[] = [];
  let widest: AcceptedRange | undefined; // among spans starting earlier, the one reaching furthest
  let earlier = 0;
  let claimed = -1;
  for (const range of resolved) {
    for (; resolved[earlier]!.startIndex < range.startIndex; earlier++) widest = furthest(widest, resolved[earlier]!);
    if (widest && widest.endIndex > range.startIndex) diagnostics.push(nestedReport(range.entry, widest.entry));
    else if (range.startIndex === claimed) diagnostics.push(duplicateReport(range.entry, range.startIndex));
    else {
      accepted.push(range);
      claimed = range.startIndex;
    }
  }
  return accepted;
}

function furthest(a: AcceptedRange | undefined, b: AcceptedRange): AcceptedRange {
  return a && a.endIndex >= b.endIndex ? a : b;
}

function unresolvedReport(entry: ChainCompressionEntry): DiagnosticReport {
  const detail = `blockId=${entry.blockId} start=${entry.startUserTimestamp} final=${entry.finalAssistantTimestamp}`;
  return { kind: "unresolved-range", detail, dedupKey: entry.blockId };
}

function nestedReport(entry: ChainCompressionEntry, outer: ChainCompressionEntry): DiagnosticReport {
  const detail = `blockId=${entry.blockId} skipped: range nests inside blockId=${outer.blockId}`;
  return { kind: "unresolved-range", detail, dedupKey: `overlap:${entry.blockId}` };
}

function duplicateReport(entry: ChainCompressionEntry, startIndex: number): DiagnosticReport {
  const detail = `blockId=${entry.blockId} skipped: range duplicates startIndex=${startIndex} already claimed`;
  return { kind: "unresolved-range", detail, dedupKey: `overlap:${entry.blockId}` };
}

// ---------------------------------------------------------------------------------------------
// Scanning: what each accepted span holds.

/** Everything the spans drop, across all accepted ranges. */
interface Dropped {
  /** Occurrence keys of dropped tool results (bare id when the result has no timestamp). */
  keys: Set<string>;
  /** Bare ids of dropped tool results and tool calls. */
  ids: Set<string>;
}

/** Per range: the protected outputs to relocate and, when asked for, the bare ids actually found in the span. */
interface SpanContent {
  protectedOutputs: ProtectedOutput[];
  actualIds?: Set<string>;
}

function* scanSpan(messages: readonly AgentMessage[], range: AcceptedRange, collectIds: boolean): Steps<SpanContent> {
  const protectedIds = new Set(range.entry.protectedToolCallIds ?? []);
  const actualIds = collectIds ? new Set<string>() : undefined;
  const content: SpanContent = { protectedOutputs: [], ...(actualIds ? { actualIds } : {}) };
  for (let i = range.startIndex + 1; i < range.endIndex; i++) {
    if (stepDue(i)) yield;
    const message = messages[i]!;
    if (message.role === "assistant") {
      if (actualIds) for (const call of toolCallParts(message)) actualIds.add(call.id);
    } else if (message.role === "toolResult") {
      const result = message as ToolResultMessage;
      actualIds?.add(result.toolCallId);
      if (protectedIds.has(result.toolCallId)) content.protectedOutputs.push({ tool: result.toolName, text: contentText(result.content) });
    }
  }
  return content;
}

/**
 * What the accepted spans drop, collected only when a per-batch summary outside them needs it:
 * a session with none (every deterministic one) never builds these sets, which hold every
 * occurrence key and id of the spans per render.
 */
function* droppedBy(messages: readonly AgentMessage[], ranges: readonly AcceptedRange[]): Steps<Dropped> {
  const dropped: Dropped = { keys: new Set(), ids: new Set() };
  for (const range of ranges) {
    for (let i = range.startIndex + 1; i < range.endIndex; i++) {
      if (stepDue(i)) yield;
      const message = messages[i]!;
      if (message.role === "assistant") {
        for (const call of toolCallParts(message)) dropped.ids.add(call.id);
      } else if (message.role === "toolResult") {
        const result = message as ToolResultMessage;
        dropped.ids.add(result.toolCallId);
        dropped.keys.add(occurrenceKey(result.toolCallId, resultTimestampOf(result.timestamp)));
      }
    }
  }
  return dropped;
}

/** The recorded ids and the ids found differ: informational, the range is applied anyway. */
function mismatchReport(entry: ChainCompressionEntry, actual: Set<string>): DiagnosticReport | undefined {
  const listed = entry.droppedToolCallIds ?? [];
  if (sameOnceEach(listed, actual)) return undefined;
  const recorded = new Set(listed.map(bareToolCallId));
  const same = recorded.size === actual.size && [...recorded].every((id) => actual.has(id));
  if (same) return undefined;
  const detail = `blockId=${entry.blockId} recorded=${recorded.size} actual=${actual.size}`;
  return { kind: "range-id-mismatch", detail, dedupKey: entry.blockId };
}

/**
 * True when `listed` names each id of `actual` exactly once (then their sets are equal), found
 * without building a set of `listed`: the common case, which spares one. `actual` is left as it
 * was. False says nothing: a list may also name an id twice (two keys of one bare id).
 */
function sameOnceEach(listed: readonly string[], actual: Set<string>): boolean {
  if (listed.length !== actual.size) return false;
  let found = 0;
  while (found < listed.length && actual.delete(bareToolCallId(listed[found]!))) found++;
  const same = found === listed.length;
  for (let i = 0; i < found; i++) actual.add(bareToolCallId(listed[i]!));
  return same;
}

// ---------------------------------------------------------------------------------------------
// Emission.

function isPerBatchSummary(message: AgentMessage): boolean {
  return message.role === "custom" && (message as { customType?: unknown }).customType === CUSTOM_TYPE_SUMMARY;
}

/** A per-batch summary naming a dropped occurrence would duplicate the synthetic message. */
function summaryOverlapsDropped(message: AgentMessage, dropped: Dropped): boolean {
  return summaryRefs((message as { details?: unknown }).details).some((ref) =>
    ref.resultTimestamp === undefined ? dropped.ids.has(ref.toolCallId) : dropped.keys.has(occurrenceKey(ref.toolCallId, ref.resultTimestamp)),
  );
}

/** Inside a span only model turns, tool output and per-batch summaries go; user and third-party messages stay. */
export function droppedInsideSpan(message: AgentMessage): boolean {
  return message.role === "assistant" || message.role === "toolResult" || isPerBatchSummary(message);
}

/** The closing reply of a compressed chain as rendered: without its thinking blocks. */
export function withoutThinking(message: AgentMessage): AgentMessage {
  const content = (message as { content?: unknown }).content;
  if (!Array.isArray(content) || !content.some((part: ContentPart) => part?.type === "thinking")) return message;
  return { ...message, content: content.filter((part: ContentPart) => part?.type !== "thinking") };
}

/** What the emission pass needs to know about each position. */
interface EmitPlan {
  /** Synthetic message to insert after the user message at this index. */
  insertAfter: Map<number, UserMessage>;
  /** Indices of closing assistants. */
  ends: Set<number>;
  /** 1 for every index strictly inside an accepted span. */
  inside: Uint8Array;
  ranges: readonly AcceptedRange[];
  /** What the spans drop, once a per-batch summary needed it. */
  dropped?: Dropped;
}

function* emit(messages: AgentMessage[], plan: EmitPlan, options: ChainRenderOptions): Steps<AgentMessage[]> {
  const out: AgentMessage[] = [];
  let changed = false;
  for (let index = 0; index < messages.length; index++) {
    if (stepDue(index)) yield;
    const message = messages[index]!;
    let drop: boolean;
    if (plan.inside[index] === 1) drop = droppedInsideSpan(message);
    else if (isPerBatchSummary(message)) drop = summaryOverlapsDropped(message, (plan.dropped ??= yield* droppedBy(messages, plan.ranges)));
    else drop = false;
    if (drop) {
      changed = true;
      continue;
    }
    const next = options.stripFinalAssistantThinking !== false && plan.ends.has(index) ? withoutThinking(message) : message;
    if (next !== message) changed = true;
    out.push(next);
    const synthetic = plan.insertAfter.get(index);
    if (synthetic) {
      out.push(synthetic);
      changed = true;
    }
  }
  return changed ? out : messages;
}

/** Apply every registered chain to the messages. */
export function applyChainRanges(messages: AgentMessage[], state: PruneState, options: ChainRenderOptions = {}): ChainRenderResult {
  return runSteps(applyChainRangesSteps(messages, state, options));
}

/** The accepted ranges of a state's chains over some messages, with the reports of those refused. */
export interface PlannedRanges {
  ranges: AcceptedRange[];
  diagnostics: DiagnosticReport[];
}

/** Plans the state's chains over `spans` (planChainRanges), pausable. */
export function* plannedRangesSteps(spans: SpanIndex, state: PruneState): Steps<PlannedRanges> {
  const diagnostics: DiagnosticReport[] = [];
  const ranges = yield* planChainRangesSteps(spans, state.chains.values(), diagnostics);
  return { ranges, diagnostics };
}

/**
 * What building one chain's message (its body, its map) costs, in a loop's plain items
 * (core/steps.ts): a step of plain items' size would hold the thread far past its slice when a
 * session has thousands of small chains (bench/RESULTS.md, "Small units").
 */
export const CHAIN_MESSAGE_ITEMS = 32;

/**
 * applyChainRanges, pausable (core/steps.ts). `planned`, when the caller has it, was planned over
 * an array whose user and assistant messages sit where they sit in `messages` (the same array
 * before its tool results were stubbed), so a large session's spans are not resolved again per render.
 */
export function* applyChainRangesSteps(messages: AgentMessage[], state: PruneState, options: ChainRenderOptions = {}, planned?: PlannedRanges): Steps<ChainRenderResult> {
  if (state.chains.size === 0) return { messages, diagnostics: [] };
  const { ranges, diagnostics: refused } = planned ?? (yield* plannedRangesSteps(yield* SpanIndex.steps(messages, state.chains.values()), state));
  const diagnostics = [...refused];
  if (ranges.length === 0) return { messages, diagnostics };
  const present = yield* presentSyntheticIds(messages);
  const bodyOfBlock = blockBodyLookup(state);
  const plan: EmitPlan = { insertAfter: new Map(), ends: new Set(), inside: new Uint8Array(messages.length), ranges };
  const checkIds = options.checkRecordedIds !== false;
  const maps = options.map === undefined ? undefined : new MapAllowance(options.map);
  const budget = new StepBudget();
  for (let k = 0; k < ranges.length; k++) {
    // Each range builds its chain's message: thousands of small chains are thousands of bodies.
    if (budget.spend(CHAIN_MESSAGE_ITEMS)) yield;
    const range = ranges[k]!;
    const span = yield* scanSpan(messages, range, checkIds);
    plan.inside.fill(1, range.startIndex + 1, range.endIndex);
    plan.ends.add(range.endIndex);
    // An already-rendered span holds no tool ids any more: comparing it would only report noise.
    if (present.has(range.entry.blockId)) continue;
    const mismatch = span.actualIds && mismatchReport(range.entry, span.actualIds);
    if (mismatch) diagnostics.push(mismatch);
    const body = chainBody(range.entry, state, bodyOfBlock);
    const map = maps === undefined ? "" : maps.next(mapCallCount(range.entry, state), () => mapCallsOf(range.entry, state, options.editedOutputs));
    plan.insertAfter.set(range.startIndex, buildSyntheticChainMessage(range.entry, body, span.protectedOutputs, map));
  }
  return { messages: yield* emit(messages, plan, options), diagnostics };
}
