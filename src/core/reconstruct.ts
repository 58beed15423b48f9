/**
 * Rebuild PruneState from a session branch (upstream's reconstructFromSession, reference §8).
 * Entries are replayed in branch order. Every field of every entry is checked first
 * (entry-shapes.ts): an entry whose `data` is missing or malformed is skipped whole, with a
 * warning naming its line, instead of aborting the load (upstream crashes there: §13.7) or
 * registering a value that would throw later, during render, stats or compact.
 */

import {
  CUSTOM_TYPE_CHAIN,
  CUSTOM_TYPE_DEDUP_ALIAS,
  CUSTOM_TYPE_INDEX,
  CUSTOM_TYPE_SUMMARY,
} from "./custom-types.js";
import { chainEntryProblem, isObject, recordProblem, refProblem } from "./entry-shapes.js";
import { contentText } from "./message-text.js";
import { occurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import { PruneState } from "./prune-state.js";
import type { ChainCompressionEntry, SummaryToolCallRef, ToolCallRecord } from "./prune-types.js";
import type { SessionEntry } from "./session-types.js";
import { runSteps, StepBudget, type Steps } from "./steps.js";

export interface ReconstructWarning {
  /** Id of the skipped entry. */
  entryId: string;
  /** 1-based line of the entry in its file, when the caller knows it. */
  line?: number;
  message: string;
}

export interface ReconstructOptions {
  /** Where an entry sits in its file (io/read-session's `lineOf`); warnings then name the line. */
  lineOf?: (entry: SessionEntry) => number | undefined;
}

/** `line 12 (entry 3f2a…): …`, or `entry 3f2a…: …` when the line is unknown. */
export function formatReconstructWarning(warning: ReconstructWarning): string {
  const where = warning.line === undefined ? `entry ${warning.entryId}` : `line ${warning.line} (entry ${warning.entryId})`;
  return `${where}: ${warning.message}`;
}

export interface ReconstructResult {
  state: PruneState;
  warnings: ReconstructWarning[];
}

export function reconstructState(branch: readonly SessionEntry[], options: ReconstructOptions = {}): ReconstructResult {
  return runSteps(reconstructStateSteps(branch, options));
}

/** reconstructState, pausable (core/steps.ts). */
export function* reconstructStateSteps(branch: readonly SessionEntry[], options: ReconstructOptions = {}): Steps<ReconstructResult> {
  const state = new PruneState();
  const warnings: ReconstructWarning[] = [];
  const aliases: Array<{ duplicateKey: string; originalKey: string }> = [];
  const budget = new StepBudget();
  for (let index = 0; index < branch.length; index++) {
    const entry = branch[index]!;
    if (budget.spend(replayWeight(entry))) yield;
    const problem = replayEntry(state, entry, aliases);
    if (!problem) continue;
    const warning: ReconstructWarning = { entryId: String(entry.id), message: problem };
    const line = options.lineOf?.(entry);
    if (line !== undefined) warning.line = line;
    warnings.push(warning);
  }
  // Applied after the walk so an alias inherits a ref whatever the entry order was.
  for (const alias of aliases) state.registerDedupAlias(alias.duplicateKey, alias.originalKey);
  return { state, warnings };
}

type Aliases = Array<{ duplicateKey: string; originalKey: string }>;

/** Work of replaying an entry: one unit, plus one per record of an index entry. */
function replayWeight(entry: SessionEntry): number {
  const data = entry.type === "custom" ? (entry as { data?: unknown }).data : undefined;
  return isObject(data) && Array.isArray(data.toolCalls) ? 1 + data.toolCalls.length : 1;
}

/** Replay one entry; returns a warning text when the entry had to be skipped. */
function replayEntry(state: PruneState, entry: SessionEntry, aliases: Aliases): string | undefined {
  const customType = (entry as { customType?: unknown }).customType;
  if (entry.type === "custom_message" && customType === CUSTOM_TYPE_SUMMARY) return replaySummary(state, entry);
  if (entry.type !== "custom") return undefined;
  const data = (entry as { data?: unknown }).data;
  if (customType === CUSTOM_TYPE_INDEX) return replayIndex(state, data);
  if (customType === CUSTOM_TYPE_CHAIN) return replayChain(state, data);
  if (customType === CUSTOM_TYPE_DEDUP_ALIAS) return collectAlias(data, aliases);
  return undefined;
}

/** Records are checked one by one: a malformed record costs itself, not its entry's neighbours. */
function replayIndex(state: PruneState, data: unknown): string | undefined {
  if (!isObject(data) || !Array.isArray(data.toolCalls)) return `${CUSTOM_TYPE_INDEX} entry without a toolCalls array`;
  if (data.refs !== undefined && !Array.isArray(data.refs)) return `${CUSTOM_TYPE_INDEX} entry: refs is not an array`;
  const backfilled = data.backfilled === true;
  const problems: string[] = [];
  for (const raw of data.toolCalls) {
    const problem = recordProblem(raw);
    if (problem) problems.push(problem);
    else state.indexRecord(normalisedRecord(raw as Record<string, unknown>), { seedDedup: !backfilled });
  }
  if (backfilled && Array.isArray(data.refs)) {
    for (const ref of data.refs) {
      const problem = refProblem(ref);
      if (problem) problems.push(problem);
      else registerRawRef(state, ref as Record<string, unknown>);
    }
  }
  if (problems.length === 0) return undefined;
  return `${CUSTOM_TYPE_INDEX} entry: ${problems.length} malformed record(s)/ref(s) skipped (first: ${problems[0]})`;
}

/**
 * Upstream's reader tolerance for two fields: a non-string resultText reads as "", a non-number
 * resultTimestamp as absent. Done on a copy: the entry objects may be pi's own live entries,
 * which must never change under it.
 */
function normalisedRecord(raw: Record<string, unknown>): ToolCallRecord {
  const badText = typeof raw.resultText !== "string";
  const badTimestamp = "resultTimestamp" in raw && resultTimestampOf(raw.resultTimestamp) === undefined;
  if (!badText && !badTimestamp) return raw as unknown as ToolCallRecord;
  const copy: Record<string, unknown> = { ...raw };
  if (badText) copy.resultText = "";
  if (badTimestamp) delete copy.resultTimestamp;
  return copy as unknown as ToolCallRecord;
}

function registerRawRef(state: PruneState, raw: Record<string, unknown>): void {
  const ref: SummaryToolCallRef = { shortId: raw.shortId as string, toolCallId: raw.toolCallId as string };
  const ts = resultTimestampOf(raw.resultTimestamp);
  if (ts !== undefined) ref.resultTimestamp = ts;
  state.registerRef(ref);
}

function replaySummary(state: PruneState, entry: SessionEntry): string | undefined {
  const details = (entry as { details?: unknown }).details;
  const refs = summaryRefs(details);
  for (const ref of refs) state.registerRef(ref);
  const text = contentText((entry as { content?: unknown }).content);
  if (text !== "") state.registerSummaryText(refs.map((r) => occurrenceKey(r.toolCallId, r.resultTimestamp)), text);
  return isObject(details) ? undefined : `${CUSTOM_TYPE_SUMMARY} message without details`;
}

/** Refs of a summary: `details.toolCallRefs`, or legacy `details.toolCallIds` (ref = id, no alias). */
export function summaryRefs(details: unknown): SummaryToolCallRef[] {
  if (!isObject(details)) return [];
  if (Array.isArray(details.toolCallRefs)) {
    const refs: SummaryToolCallRef[] = [];
    for (const raw of details.toolCallRefs) {
      if (refProblem(raw) !== undefined) continue;
      const { shortId, toolCallId, resultTimestamp } = raw as { shortId: string; toolCallId: string; resultTimestamp?: unknown };
      const ts = resultTimestampOf(resultTimestamp);
      refs.push(ts === undefined ? { shortId, toolCallId } : { shortId, toolCallId, resultTimestamp: ts });
    }
    return refs;
  }
  if (Array.isArray(details.toolCallIds)) {
    return details.toolCallIds.filter((id): id is string => typeof id === "string").map((id) => ({ shortId: id, toolCallId: id }));
  }
  return [];
}

function replayChain(state: PruneState, data: unknown): string | undefined {
  const problem = chainEntryProblem(data);
  if (problem) return `${CUSTOM_TYPE_CHAIN} entry skipped: ${problem}`;
  state.registerChain(data as unknown as ChainCompressionEntry);
  return undefined;
}

function collectAlias(data: unknown, aliases: Aliases): string | undefined {
  if (!isObject(data) || typeof data.newToolCallId !== "string" || typeof data.originalToolCallId !== "string") {
    return `${CUSTOM_TYPE_DEDUP_ALIAS} entry without both ids`;
  }
  aliases.push({
    duplicateKey: occurrenceKey(data.newToolCallId, resultTimestampOf(data.newResultTimestamp)),
    originalKey: occurrenceKey(data.originalToolCallId, resultTimestampOf(data.originalResultTimestamp)),
  });
  return undefined;
}
