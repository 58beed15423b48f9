/**
 * Rebuild PruneState from a session branch (upstream's reconstructFromSession, reference §8).
 * Entries are replayed in branch order; an entry whose `data` is missing or malformed is skipped
 * with a warning instead of aborting the load (upstream crashes there: §13.7).
 */

import {
  CUSTOM_TYPE_CHAIN,
  CUSTOM_TYPE_DEDUP_ALIAS,
  CUSTOM_TYPE_INDEX,
  CUSTOM_TYPE_SUMMARY,
} from "./custom-types.js";
import { contentText } from "./message-text.js";
import { occurrenceKey, resultTimestampOf } from "./occurrence-key.js";
import { PruneState } from "./prune-state.js";
import type { ChainCompressionEntry, SummaryToolCallRef, ToolCallRecord } from "./prune-types.js";
import type { SessionEntry } from "./session-types.js";

export interface ReconstructWarning {
  /** Id of the skipped entry. */
  entryId: string;
  message: string;
}

export interface ReconstructResult {
  state: PruneState;
  warnings: ReconstructWarning[];
}

export function reconstructState(branch: readonly SessionEntry[]): ReconstructResult {
  const state = new PruneState();
  const warnings: ReconstructWarning[] = [];
  const aliases: Array<{ duplicateKey: string; originalKey: string }> = [];
  for (const entry of branch) {
    const problem = replayEntry(state, entry, aliases);
    if (problem) warnings.push({ entryId: String(entry.id), message: problem });
  }
  // Applied after the walk so an alias inherits a ref whatever the entry order was.
  for (const alias of aliases) state.registerDedupAlias(alias.duplicateKey, alias.originalKey);
  return { state, warnings };
}

type Aliases = Array<{ duplicateKey: string; originalKey: string }>;

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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function replayIndex(state: PruneState, data: unknown): string | undefined {
  if (!isObject(data) || !Array.isArray(data.toolCalls)) return `${CUSTOM_TYPE_INDEX} entry without a toolCalls array`;
  const backfilled = data.backfilled === true;
  let skipped = 0;
  for (const raw of data.toolCalls) {
    const record = asRecord(raw);
    if (!record) skipped++;
    else state.indexRecord(record, { seedDedup: !backfilled });
  }
  if (backfilled && Array.isArray(data.refs)) for (const ref of data.refs) registerRawRef(state, ref);
  return skipped > 0 ? `${CUSTOM_TYPE_INDEX} entry: ${skipped} malformed record(s) skipped` : undefined;
}

/**
 * A record needs a string id and name. Odd fields are normalised on a copy: the entry objects may
 * be pi's own live entries, which must never change under it.
 */
function asRecord(raw: unknown): ToolCallRecord | undefined {
  if (!isObject(raw) || typeof raw.toolCallId !== "string" || raw.toolCallId === "") return undefined;
  if (typeof raw.toolName !== "string") return undefined;
  const badText = typeof raw.resultText !== "string";
  const badTimestamp = "resultTimestamp" in raw && resultTimestampOf(raw.resultTimestamp) === undefined;
  if (!badText && !badTimestamp) return raw as unknown as ToolCallRecord;
  const copy: Record<string, unknown> = { ...raw };
  if (badText) copy.resultText = "";
  if (badTimestamp) delete copy.resultTimestamp;
  return copy as unknown as ToolCallRecord;
}

function registerRawRef(state: PruneState, raw: unknown): void {
  if (!isObject(raw) || typeof raw.shortId !== "string" || typeof raw.toolCallId !== "string") return;
  const ref: SummaryToolCallRef = { shortId: raw.shortId, toolCallId: raw.toolCallId };
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
      if (!isObject(raw) || typeof raw.shortId !== "string" || typeof raw.toolCallId !== "string") continue;
      const ts = resultTimestampOf(raw.resultTimestamp);
      refs.push(ts === undefined ? { shortId: raw.shortId, toolCallId: raw.toolCallId } : { shortId: raw.shortId, toolCallId: raw.toolCallId, resultTimestamp: ts });
    }
    return refs;
  }
  if (Array.isArray(details.toolCallIds)) {
    return details.toolCallIds.filter((id): id is string => typeof id === "string").map((id) => ({ shortId: id, toolCallId: id }));
  }
  return [];
}

function replayChain(state: PruneState, data: unknown): string | undefined {
  if (!isObject(data) || typeof data.blockId !== "string" || !data.blockId || typeof data.startUserTimestamp !== "number") {
    return `${CUSTOM_TYPE_CHAIN} entry without blockId/startUserTimestamp`;
  }
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
