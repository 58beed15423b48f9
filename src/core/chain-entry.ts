/**
 * Builders for the persisted `data` objects whose JSON key order is part of the format
 * (reference §1.1, §1.3, §2.1). Anything written to a session goes through here.
 */

import type { ArchivedPart } from "./archived-parts.js";
import { utf8Join } from "./utf8-join.js";
import type { ChainCompressionEntry, ChainRange, IndexEntryData, SummaryToolCallRef, ToolCallRecord } from "./prune-types.js";
import { jsonText } from "./json-text.js";

export interface ChainEntryInput {
  chain: ChainRange;
  blockId: string;
  toolRefs: string[];
  compressedAt: number;
  /** Deterministic path: always set. Covered path: only when a fused text exists. */
  rangeSummaryText?: string;
  deterministic: boolean;
}

/** A `context-prune-chain` entry, keys in upstream's order for the chosen path. */
export function buildChainEntry(input: ChainEntryInput): ChainCompressionEntry {
  const { chain } = input;
  const entry: ChainCompressionEntry = {
    blockId: input.blockId,
    startUserTimestamp: chain.startUserTimestamp,
    droppedToolCallIds: [...chain.middleToolCallIds],
    finalAssistantTimestamp: chain.finalAssistantTimestamp,
    toolRefs: [...input.toolRefs],
    compressedAt: input.compressedAt,
  };
  if (input.rangeSummaryText !== undefined) entry.rangeSummaryText = input.rangeSummaryText;
  if (input.deterministic) entry.bodySource = "deterministic";
  if (chain.protectedToolCallIds.length > 0) entry.protectedToolCallIds = [...chain.protectedToolCallIds];
  if (chain.middleOccurrenceKeys.length > 0) entry.droppedOccurrenceKeys = [...chain.middleOccurrenceKeys];
  return entry;
}

/** The index entry written by the backfill: records, then the marker, then their refs. */
export function buildBackfilledIndexData(records: ToolCallRecord[], refs: SummaryToolCallRef[]): IndexEntryData {
  return { toolCalls: records, backfilled: true, refs };
}

/**
 * `JSON.stringify(buildBackfilledIndexData(records, refs))` as UTF-8, serialised one record at a
 * time (the same bytes; a test holds them equal): the index entry of a ~1M-character chain is
 * one of the largest strings a worker builds.
 */
export function backfilledIndexDataBytes(records: ToolCallRecord[], refs: SummaryToolCallRef[]): Buffer {
  return indexDataBytesOf(
    records.map((record) => [jsonText(record)]),
    refs,
  );
}

/**
 * The same, from each record's JSON given as parts (strings, or UTF-8 bytes already encoded);
 * written into `room` when it is large enough (utf8Join).
 */
export function indexDataBytesOf(recordJson: ReadonlyArray<ReadonlyArray<string | Uint8Array>>, refs: SummaryToolCallRef[], room?: Buffer): Buffer {
  const empty = JSON.stringify(buildBackfilledIndexData([], refs));
  // `toolCalls` is the first key, so the first "[]" is its (empty) array.
  const open = empty.indexOf("[]") + 1;
  const parts: Array<string | Uint8Array> = [empty.slice(0, open)];
  recordJson.forEach((record, i) => parts.push(i > 0 ? "," : "", ...record));
  parts.push(empty.slice(open));
  return utf8Join(parts, room);
}

export interface SpillFields {
  spillBytes: number;
  resultPreview: string;
  spillPath: string;
  contentHash: string;
  spillDigest: string;
}

/** `turnIndex` of a backfilled record: it belongs to no summarised batch (reference §4.5). */
export const BACKFILLED_TURN_INDEX = -1;

/** An output's non-text parts as its record keeps them, with the content hash that covers them (core/content-hash.ts `contentHashWithParts`). */
export interface PartsFields {
  contentHash: string;
  parts: ArchivedPart[];
}

/**
 * A backfilled record in upstream's key order; spill fields follow, `resultText` emptied in place.
 * With non-text parts, the record's `contentHash` is the one covering them and `parts` comes last.
 */
export function buildBackfilledRecord(
  fields: Omit<ToolCallRecord, "turnIndex" | "timestamp" | "resultTimestamp" | "parts"> & { resultTimestamp: number },
  spill?: SpillFields,
  parts?: PartsFields,
): ToolCallRecord {
  const record: ToolCallRecord = {
    toolCallId: fields.toolCallId,
    toolName: fields.toolName,
    args: fields.args,
    resultText: spill ? "" : fields.resultText,
    isError: fields.isError,
    turnIndex: BACKFILLED_TURN_INDEX,
    timestamp: fields.resultTimestamp,
    resultTimestamp: fields.resultTimestamp,
  };
  if (spill) {
    record.spillBytes = spill.spillBytes;
    record.resultPreview = spill.resultPreview;
    record.spillPath = spill.spillPath;
    record.contentHash = parts?.contentHash ?? spill.contentHash;
    record.spillDigest = spill.spillDigest;
  } else if (parts) {
    record.contentHash = parts.contentHash;
  }
  if (parts) record.parts = parts.parts;
  return record;
}

/** A short ref with the timestamp only when known. */
export function buildRef(shortId: string, toolCallId: string, resultTimestamp?: number): SummaryToolCallRef {
  return resultTimestamp === undefined ? { shortId, toolCallId } : { shortId, toolCallId, resultTimestamp };
}
