/**
 * The pi-condense-compatible data model: archived records, short refs, chain ranges,
 * chain entries and diagnostics. Field names and key orders are the compatibility surface
 * (see shared/reference/UPSTREAM-FORMAT.md §1-§2). Pure types: no runtime code.
 */

import type { ArchivedPart } from "./archived-parts.js";

/** One archived tool call and its output (an element of `context-prune-index` `data.toolCalls`). */
export interface ToolCallRecord {
  /** Bare provider id of the tool call. */
  toolCallId: string;
  toolName: string;
  /** Tool-call arguments as the assistant sent them. */
  args: unknown;
  /** Full output text; `""` when the output was spilled to a file. */
  resultText: string;
  isError: boolean;
  /** Batch turn; `-1` for records written by the deterministic backfill. */
  turnIndex: number;
  /** Capture time; for backfilled records the toolResult message timestamp. */
  timestamp: number;
  /** toolResult message timestamp: the occurrence discriminant. Absent on legacy records. */
  resultTimestamp?: number;
  /** UTF-8 byte length of the spilled output. */
  spillBytes?: number;
  /** Head of the spilled output kept inline. */
  resultPreview?: string;
  /** Absolute path of the spill file. */
  spillPath?: string;
  /** SHA-1 content hash of the full (normalised) output, as upstream computes it. */
  contentHash?: string;
  /** chainpress addition: `xxh64:<16 hex>` of the spill file's exact bytes, checked on query. */
  spillDigest?: string;
  /**
   * chainpress addition: the output's non-text content parts, in content order (core/archived-parts.ts).
   * Absent on text-only outputs. A record with parts always carries a `contentHash` covering them.
   */
  parts?: ArchivedPart[];
}

/** A short ref (`t<N>`) naming one occurrence. */
export interface SummaryToolCallRef {
  shortId: string;
  toolCallId: string;
  resultTimestamp?: number;
}

/** `data` of a `context-prune-index` entry. */
export interface IndexEntryData {
  toolCalls: ToolCallRecord[];
  /** Only on entries written by the deterministic backfill. */
  backfilled?: true;
  /** Only on backfilled entries: the refs allocated for their records. */
  refs?: SummaryToolCallRef[];
}

/** A chain found by detection (in memory only). */
export interface ChainRange {
  /** Timestamp of the user message that opens the chain; the chain's identity. */
  startUserTimestamp: number;
  /** Bare ids of every tool call and result in the chain, first-seen order, de-duplicated. */
  middleToolCallIds: string[];
  /** One occurrence key per toolResult in the chain, de-duplicated. */
  middleOccurrenceKeys: string[];
  /** Middle ids whose call matched the protection rule. */
  protectedToolCallIds: string[];
  /** Timestamp of the closing text-only assistant; `null` for an interrupted chain. */
  finalAssistantTimestamp: number | null;
}

/** `data` of a `context-prune-chain` entry. Build it with chain-entry.ts to get upstream's key order. */
export interface ChainCompressionEntry {
  blockId: string;
  startUserTimestamp: number;
  droppedToolCallIds: string[];
  finalAssistantTimestamp: number | null;
  toolRefs: string[];
  compressedAt: number;
  rangeSummaryText?: string;
  bodySource?: "deterministic";
  protectedToolCallIds?: string[];
  droppedOccurrenceKeys?: string[];
}

/** `data` of a `context-prune-dedup-alias` entry. */
export interface DedupAliasEntryData {
  newToolCallId: string;
  originalToolCallId: string;
  newResultTimestamp?: number;
  originalResultTimestamp?: number;
  hash?: string;
}

/**
 * Upstream's four kinds, plus chainpress's `backfill-skipped`: a chain the deterministic path
 * refuses for good (its data can never give a body or a safe archive), detail
 * `start=<startUserTimestamp> reason=<why>`. Upstream never reads diagnostics back (§1.5), so an
 * extra kind is invisible to it.
 */
export type DiagnosticKind = "unresolved-range" | "range-id-mismatch" | "orphan-sweep" | "backfill-empty" | "backfill-skipped";

/** `data` of a `context-prune-diagnostic` entry. */
export interface DiagnosticEntryData {
  kind: DiagnosticKind;
  detail: string;
}

/** A diagnostic before it is persisted: the dedup key decides whether it is new. */
export interface DiagnosticReport extends DiagnosticEntryData {
  dedupKey: string;
}

/**
 * Why an eligible (or closed) chain was not compressed in a pass: upstream's two reasons, and chainpress's for a chain whose archive could not be written:
 * `spill-refused` (a link, a non-folder or another output where its spill file goes), `disk-full`
 * (ENOSPC or quota), `write-failed` (any other I/O error). Other failures keep `no-summary`.
 * `would-grow`: chainpress's decision to leave a chain whose compressed form would not be shorter
 * than what it replaces (core/chain-shrink.ts); reported only, never written to the session.
 */
export type SkipReason = "no-summary" | "already-compressed" | "spill-refused" | "disk-full" | "write-failed" | "would-grow";

export interface ChainSkip {
  startUserTimestamp: number;
  reason: SkipReason;
  /** chainpress addition: human-readable cause (worker crash, spill I/O, ...). */
  cause?: string;
  /** chainpress addition: true when a failure (not a decision) left the chain uncompressed; the next pass retries it. */
  failed?: boolean;
  /** chainpress addition: the chain's own data rules it out on every run (reported as `backfill-skipped`). */
  permanent?: boolean;
}
