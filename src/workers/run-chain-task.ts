/**
 * Executes a ChainTask: decode the slice, extract the planned records, hash and spill oversized
 * outputs, build the deterministic body. Used by the piscina worker and, unchanged, inline
 * (`workers: 0`), so both modes produce the same bytes.
 */

import { performance } from "node:perf_hooks";
import { unpackMultiple } from "msgpackr";
import { buildBackfilledIndexData, buildBackfilledRecord, buildRef, type SpillFields } from "../core/chain-entry.js";
import { contentHash } from "../core/content-hash.js";
import { buildDeterministicBody } from "../core/deterministic-body.js";
import { loadHasher, spillDigestOf, type Hasher } from "../core/digest.js";
import { outputFields, spanOutputs } from "../core/extract-records.js";
import { headPreview } from "../core/head-preview.js";
import { lightenInPlace } from "../core/light-value.js";
import { occurrenceKey } from "../core/occurrence-key.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { AgentMessage } from "../core/session-types.js";
import { spillFileName } from "../core/spill-layout.js";
import { isWellFormedText } from "../core/well-formed.js";
import { ensureBlobDir, syncBlobDir, writeSpillFile } from "../io/write-spill.js";
import type { ChainTask, ChainTaskResult, SpillSettings, TaskTimings } from "./chain-task.js";
import { readFileSlice } from "./read-file-slice.js";

export async function runChainTask(task: ChainTask): Promise<ChainTaskResult> {
  injectFault(task);
  const hasher = await loadHasher();
  const timings: TaskTimings = { decode: 0, extract: 0, hash: 0, spill: 0, body: 0 };
  let t = performance.now();
  const inner = sliceMessages(task);
  t = lap(timings, "decode", t);
  const fields = extractPlanned(task, inner);
  t = lap(timings, "extract", t);
  const records: ToolCallRecord[] = [];
  let spilledFiles = 0;
  let spilledBytes = 0;
  let archivedChars = 0;
  for (const field of fields) {
    archivedChars += field.resultText.length;
    const spill = shouldSpill(field.resultText, task.spill.threshold) ? spillOutput(task, hasher, field, timings) : undefined;
    if (spill) {
      spilledFiles++;
      spilledBytes += spill.spillBytes;
    }
    records.push(buildBackfilledRecord(field, spill));
  }
  if (spilledFiles > 0) syncBlobDir(task.spill);
  t = performance.now();
  const refs = records.map((record, i) => buildRef(task.reservedRefs[i]!, record.toolCallId, record.resultTimestamp));
  const body = task.indexOnly ? "" : buildDeterministicBody([...task.indexedRecords, ...records], task.toolRefs);
  const indexDataJson = Buffer.from(JSON.stringify(buildBackfilledIndexData(records, refs)), "utf8");
  // The file path's main thread plans from lightened entries and keeps lightened records; the
  // index entry's bytes above are the faithful copy that gets written.
  if (task.fileSlice) for (const record of records) lightenInPlace(record);
  lap(timings, "body", t);
  return { records, refs, body, indexDataJson, lightened: task.fileSlice !== undefined, spilledFiles, spilledBytes, archivedChars, timings };
}

/**
 * Upstream's rule (length ≥ threshold), except for text with a lone surrogate: UTF-8 cannot
 * carry it, so a spill file would return U+FFFD. Kept inline, JSON stores it exactly.
 */
function shouldSpill(text: string, threshold: number): boolean {
  return text.length >= threshold && isWellFormedText(text);
}

/** The span's messages, from wherever the task carries them. */
function sliceMessages(task: ChainTask): AgentMessage[] {
  if (task.fileSlice) return readFileSlice(task.fileSlice, task.chainStart);
  return task.inner ?? (unpackMultiple(task.encodedSlice ?? new Uint8Array()) as AgentMessage[]);
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

function spillOutput(task: ChainTask, hasher: Hasher, field: OutputFields, timings: TaskTimings): SpillFields {
  let t = performance.now();
  const bytes = Buffer.from(field.resultText, "utf8");
  const key = occurrenceKey(field.toolCallId, field.resultTimestamp);
  const fields = {
    spillBytes: bytes.length,
    resultPreview: headPreview(field.resultText, task.spill.previewBytes),
    contentHash: contentHash(field.toolName, field.resultText),
    spillDigest: spillDigestOf(hasher, bytes),
  };
  t = lap(timings, "hash", t);
  ensureBlobDir(task.spill);
  const spillPath = writeSpillFile(task.spill, spillFileName(hasher, key), bytes);
  lap(timings, "spill", t);
  return { ...fields, spillPath };
}

function injectFault(task: ChainTask): void {
  if (task.fault === "throw") throw new Error(`injected fault in chain ${task.chainStart}`);
  // In a worker thread process.exit ends only that thread: the pool sees a dead worker.
  if (task.fault === "exit") process.exit(70);
  // A worker that never answers: only its deadline (main/chain-runner.ts) ends it.
  if (task.fault === "hang") for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

export type { SpillSettings };
