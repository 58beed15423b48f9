/**
 * The unit of work sent to a worker: one uncovered chain. The main thread has already resolved
 * the span, chosen which outputs to archive and reserved their refs, so the worker's result is
 * the same whichever worker runs it, or whether it runs inline.
 */

import type { BodyRecord } from "../core/deterministic-body.js";
import type { AgentMessage } from "../core/session-types.js";
import type { SpilledPart } from "../core/archived-parts.js";
import type { SpillFields } from "../core/chain-entry.js";
import type { SummaryToolCallRef, ToolCallRecord } from "../core/prune-types.js";
import type { OutputLiteral } from "../io/output-literal.js";
import type { SpillTarget, StagedSpill } from "../io/write-spill.js";

export interface SpillSettings extends SpillTarget {
  /** Outputs of at least this many UTF-16 units are spilled. */
  threshold: number;
  /** UTF-8 bytes kept inline as the preview. */
  previewBytes: number;
}

/** Test-only fault to inject inside the worker. */
export type TaskFault = "throw" | "exit" | "hang";

/** A line of the session file the worker reads itself, and what the plan says it holds. */
export interface ExpectedLine {
  byteOffset: number;
  bytes: number;
  /** 1-based line number, for error messages. */
  line: number;
  /** Entry id, and the message's role, timestamp and tool-call id as planned. */
  id: string;
  role: string;
  timestamp: unknown;
  toolCallId?: unknown;
  /**
   * A tool result whose text the scan found as one literal of the line: the worker takes the
   * literal's bytes (checked against the digest) instead of parsing the line, and the message's
   * other fields from here.
   */
  output?: { literal: OutputLiteral; isError: boolean };
}

/**
 * The span's messages as lines of the session file (the file path: bytes never cross the main
 * thread), in columns (workers/file-slice-columns.ts builds and reads them): line i is
 * ExpectedLine i.
 */
export interface FileSlice {
  file: string;
  /** Per line: byte offset, byte length, 1-based line number. */
  locations: Float64Array;
  ids: string[];
  roles: string[];
  timestamps: unknown[];
  /** undefined where the message has no tool-call id. */
  toolCallIds: unknown[];
  /** Per located output: its line's index in the slice, the literal's numbers, isError. */
  outputs: Float64Array;
  /** Per located output: the literal's digest. */
  digests: string[];
}

/**
 * Where a chain task's messages (those strictly inside the span) come from:
 * - "file-slice": the worker reads them from the session file's lines (no output's bytes cross
 *   the main thread). `mainMessages` says how the main thread holds them, which it makes the
 *   records from: "lightened" (compact's model) or "whole" (pi's messages, in memory), and so how
 *   the `archived` facts come back.
 * - "encoded": each msgpackr-encoded, back to back in chunks (main/encode-slice.ts): the live path.
 *   The chunks' buffers are moved to the worker.
 * - "messages": as objects, structured-cloned, for the rare slice msgpack cannot carry (lone
 *   surrogates, a `__proto__` key).
 * - "json": each message's JSON text, for a slice nested deeper than msgpack or structured clone
 *   can go (core/json-text.ts CLONE_MAX_DEPTH); JSON.parse reads any depth.
 */
export type ChainInput =
  | { kind: "file-slice"; slice: FileSlice; mainMessages: "lightened" | "whole" }
  | { kind: "encoded"; chunks: Uint8Array[] }
  | { kind: "messages"; messages: AgentMessage[] }
  | { kind: "json"; texts: string[] };

export interface ChainTask {
  /** startUserTimestamp of the chain (for error messages). */
  chainStart: number;
  input: ChainInput;
  protectedIds: string[];
  /** Occurrence keys to archive, in span order (planned on the main thread). */
  plannedKeys: string[];
  /** Reserved `t<N>`, one per planned key. */
  reservedRefs: string[];
  /**
   * Records of chain members archived earlier (a retry after a partial failure, an open chain's
   * earlier steps). Args that nest too deep to be cloned come as `argsJson` instead
   * (core/json-text.ts CLONE_MAX_DEPTH).
   */
  indexedRecords: Array<BodyRecord & { argsJson?: string }>;
  /** The chain entry's toolRefs, as they will be once this chain's refs are registered. */
  toolRefs: string[];
  spill: SpillSettings;
  /** A buffer for the index entry's bytes, moved to the worker and back with them, offered again once they are written. */
  indexRoom?: ArrayBuffer;
  /** Records and index entry only, no body: an open chain's older outputs (issue 13). */
  indexOnly?: true;
  fault?: TaskFault;
}

/** Per-stage wall time inside the task, in milliseconds. */
export interface TaskTimings {
  decode: number;
  extract: number;
  hash: number;
  /** Writing the spill files, plus the main thread's wait for the disk after the task (main/settle-spills.ts), which overlaps other work. */
  spill: number;
  body: number;
}

/**
 * What the main thread's messages cannot tell of one archived output's record (a file-slice
 * task's): main/file-task-records.ts builds the record from the planned output and this.
 */
export interface ArchivedFacts {
  /** A spilled output's fields. */
  spill?: SpillFields;
  /** The record's text, when it is not its message's one text (several text parts joined). */
  resultText?: string;
  /**
   * An output with non-text parts: the content hash that covers them and the parts that were
   * spilled; the main thread keeps the others inline from its own message (core/archived-parts.ts
   * `mergeArchivedParts`).
   */
  parts?: { contentHash: string; spilled: SpilledPart[] };
}

/** What every chain task's result carries, whichever its form. */
export interface TaskResultBase {
  /** The deterministic body (rangeSummaryText); empty for an `indexOnly` task. */
  body: string;
  /**
   * UTF-8 JSON of the index entry's data ({toolCalls, backfilled, refs}), so the main thread need
   * not serialise megabytes. When the main thread's messages are lightened, so are the records it
   * makes from them (core/light-value.ts), and these bytes are the only faithful copy of them. A
   * view of the task's `indexRoom` when that was large enough, else of a buffer of its own: either
   * way the whole of its `buffer` may be offered again as a later task's room.
   */
  indexDataJson: Uint8Array;
  spilledFiles: number;
  spilledBytes: number;
  /**
   * The spill files, written under temporary names and not yet durable: the caller settles them
   * (main/settle-spills.ts `runAndSettleSpills`) before it appends the chain's index entry, which then finds
   * them durable under their final names.
   */
  staged: StagedSpill[];
  /** UTF-16 units of output archived (before spilling). */
  archivedChars: number;
  timings: TaskTimings;
}

/** An "encoded" or "messages" task's result: the fresh records themselves, whole, and their refs. */
export interface RecordsResult extends TaskResultBase {
  kind: "records";
  /** In planned order; spilled ones carry spill fields and an empty resultText. Empty when `recordsJson` holds them. */
  records: ToolCallRecord[];
  /** Each record's JSON text instead, when a call's args or a part kept inline nest too deep to be cloned (core/json-text.ts CLONE_MAX_DEPTH). */
  recordsJson?: string[];
  refs: SummaryToolCallRef[];
}

/**
 * A "file-slice" task's result: no records (the main thread makes them from its own messages and
 * these facts, main/file-task-records.ts) and no refs (it makes them from the plan's reserved ones).
 */
export interface FactsResult extends TaskResultBase {
  kind: "facts";
  /**
   * Per planned output, what its record adds to the main thread's messages, lightened or whole as
   * those are (the task's `mainMessages`); undefined for the usual output, whose record is made
   * from them alone (an object for each would cross to the main thread and wait there for its
   * commit).
   */
  archived: Array<ArchivedFacts | undefined>;
}

export type ChainTaskResult = RecordsResult | FactsResult;

/** What the pass's stats take of a task's result (main/compress-stats.ts). */
export type TaskFigures = Pick<TaskResultBase, "spilledFiles" | "spilledBytes" | "archivedChars" | "timings">;

/**
 * Why a file-slice task fails when its lines are not what the plan was made from: one is another
 * entry, or they cannot be read (the file was cut, rewritten, removed). An error crosses from a
 * worker with its message only: the main thread, which may then send the chain encoded instead,
 * recognises these by their last words.
 */
export function lineChangedMessage(chainStart: number, file: string, line: number, id: string): string {
  return `chain ${chainStart}: ${file}:${line} is not the entry ${id} the plan was made from ${FILE_CHANGED}`;
}

export function unreadableLinesMessage(chainStart: number, file: string, cause: string): string {
  return `chain ${chainStart}: cannot read its lines in ${file}: ${cause} ${FILE_CHANGED}`;
}

const FILE_CHANGED = "(the file changed?)";

export function isFileChanged(error: unknown): boolean {
  return error instanceof Error && error.message.endsWith(FILE_CHANGED);
}
