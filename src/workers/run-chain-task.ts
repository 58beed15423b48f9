/**
 * Executes a ChainTask: decode the slice, extract the planned records, hash and spill oversized
 * outputs, build the deterministic body. Used by the piscina worker and, unchanged, inline
 * (`workers: 0`), so both modes produce the same bytes.
 */

import { performance } from "node:perf_hooks";
import { unpackMultiple } from "msgpackr";
import { backfilledIndexDataBytes, buildBackfilledRecord, buildRef, indexDataBytesOf, type SpillFields } from "../core/chain-entry.js";
import { buildDeterministicBody } from "../core/deterministic-body.js";
import { loadHasher, type Hasher } from "../core/digest.js";
import { outputFields, spanOutputs } from "../core/extract-records.js";
import { lightenInPlace } from "../core/light-value.js";
import { occurrenceKey } from "../core/occurrence-key.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { AgentMessage } from "../core/session-types.js";
import { spillFileName } from "../core/spill-layout.js";
import { shouldSpill } from "../core/spill-rule.js";
import { ensureBlobDir, spillPathFor, syncBlobDir, writeSpillFiles, type SpillWrite } from "../io/write-spill.js";
import type { ChainTask, ChainTaskResult, SpillSettings, SpoolSlice, TaskTimings } from "./chain-task.js";
import { readFileSlice } from "./read-file-slice.js";
import { spillMaterial } from "./spill-material.js";
import { spooledRecords } from "./spooled-records.js";

export async function runChainTask(task: ChainTask): Promise<ChainTaskResult> {
  injectFault(task);
  const hasher = await loadHasher();
  return task.spoolSlice ? runSpooled(task, task.spoolSlice, hasher) : runFromMessages(task, hasher);
}

/** The file path after a spooled scan: records assembled from the spool, no line read again. */
async function runSpooled(task: ChainTask, slice: SpoolSlice, hasher: Hasher): Promise<ChainTaskResult> {
  const timings: TaskTimings = { decode: 0, extract: 0, hash: 0, spill: 0, body: 0 };
  let t = performance.now();
  const spooled = await spooledRecords(task, slice, hasher);
  if (spooled.spilledFiles > 0) syncBlobDir(task.spill);
  t = lap(timings, "spill", t);
  const refs = refsOf(task, spooled.bodyRecords);
  const body = task.indexOnly ? "" : buildDeterministicBody([...task.indexedRecords, ...spooled.bodyRecords], task.toolRefs);
  const indexDataJson = indexDataBytesOf(spooled.recordJson, refs);
  lap(timings, "body", t);
  const { records, spilledFiles, spilledBytes, archivedChars } = spooled;
  return { records, refs, body, indexDataJson, lightened: true, spilledFiles, spilledBytes, archivedChars, timings };
}

/** The messages of the span (read from the file, decoded from msgpack, or as sent). */
async function runFromMessages(task: ChainTask, hasher: Hasher): Promise<ChainTaskResult> {
  const timings: TaskTimings = { decode: 0, extract: 0, hash: 0, spill: 0, body: 0 };
  let t = performance.now();
  const inner = sliceMessages(task);
  t = lap(timings, "decode", t);
  const fields = extractPlanned(task, inner);
  t = lap(timings, "extract", t);
  const records: ToolCallRecord[] = [];
  const writes: SpillWrite[] = [];
  let spilledBytes = 0;
  let archivedChars = 0;
  for (const field of fields) {
    archivedChars += field.resultText.length;
    const spill = shouldSpill(field.resultText, task.spill.threshold) ? spillOutput(task, hasher, field, writes) : undefined;
    if (spill) spilledBytes += spill.spillBytes;
    records.push(buildBackfilledRecord(field, spill));
  }
  t = lap(timings, "hash", t);
  const spilledFiles = writes.length;
  if (spilledFiles > 0) {
    ensureBlobDir(task.spill);
    await writeSpillFiles(task.spill, writes);
    syncBlobDir(task.spill);
  }
  t = lap(timings, "spill", t);
  const refs = refsOf(task, records);
  const body = task.indexOnly ? "" : buildDeterministicBody([...task.indexedRecords, ...records], task.toolRefs);
  const indexDataJson = backfilledIndexDataBytes(records, refs);
  // The file path's main thread plans from lightened entries and keeps lightened records; the
  // index entry's bytes above are the faithful copy that gets written.
  if (task.fileSlice) for (const record of records) lightenInPlace(record);
  lap(timings, "body", t);
  return { records, refs, body, indexDataJson, lightened: task.fileSlice !== undefined, spilledFiles, spilledBytes, archivedChars, timings };
}

function refsOf(task: ChainTask, records: readonly ToolCallRecord[]) {
  return records.map((record, i) => buildRef(task.reservedRefs[i]!, record.toolCallId, record.resultTimestamp));
}

/** The span's messages, from wherever the task carries them. */
function sliceMessages(task: ChainTask): AgentMessage[] {
  if (task.fileSlice) return readFileSlice(task.fileSlice, task.chainStart);
  return task.inner ?? (task.encodedSlice ?? []).flatMap((chunk) => unpackMultiple(chunk) as AgentMessage[]);
}

function lap(timings: TaskTimings, stage: keyof TaskTimings, since: number): number {
  const now = performance.now();
  timings[stage] += now - since;
  return now;
}

/** Extract exactly the planned outputs; anything else means main and worker disagree: fail closed. */
function extractPlanned(task: ChainTask, inner: AgentMessage[]) {
  const wanted = new Set(task.plannedKeys);
  const found = [...spanOutputs(inner, new Set(task.protectedIds), (key) => !wanted.has(key))];
  const keys = found.map((output) => output.key);
  if (keys.length !== task.plannedKeys.length || keys.some((key, i) => key !== task.plannedKeys[i])) {
    throw new Error(`chain ${task.chainStart}: extracted outputs differ from the plan`);
  }
  return found.map(outputFields);
}

type OutputFields = ReturnType<typeof outputFields>;

/** An output's spill fields; its file joins `writes`, written (durably) before the task ends. */
function spillOutput(task: ChainTask, hasher: Hasher, field: OutputFields, writes: SpillWrite[]): SpillFields {
  const { bytes, ...fields } = spillMaterial(hasher, field.toolName, field.resultText, task.spill.previewBytes);
  const fileName = spillFileName(hasher, occurrenceKey(field.toolCallId, field.resultTimestamp));
  writes.push({ fileName, bytes });
  return { spillBytes: bytes.length, resultPreview: fields.resultPreview, spillPath: spillPathFor(task.spill, fileName), contentHash: fields.contentHash, spillDigest: fields.spillDigest };
}

function injectFault(task: ChainTask): void {
  if (task.fault === "throw") throw new Error(`injected fault in chain ${task.chainStart}`);
  // In a worker thread process.exit ends only that thread: the pool sees a dead worker.
  if (task.fault === "exit") process.exit(70);
  // A worker that never answers: only its deadline (main/chain-runner.ts) ends it.
  if (task.fault === "hang") for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

export type { SpillSettings };
