/**
 * Executes a ChainTask: read or decode the slice, extract the planned records, hash and spill
 * oversized outputs, build the deterministic body. Used by the piscina worker and, unchanged,
 * inline (`workers: 0`), so both modes produce the same bytes. On the file path the outputs stay
 * in the lines' bytes as refs (core/literal-refs.ts) from the read to the index entry's bytes.
 */

import { performance } from "node:perf_hooks";
import { buildRef, indexDataBytesOf, type SpillFields } from "../core/chain-entry.js";
import { argsExcerpt, buildDeterministicBody } from "../core/deterministic-body.js";
import { loadHasher, type Hasher } from "../core/digest.js";
import { spanOutputs } from "../core/extract-records.js";
import { Lightener } from "../core/light-value.js";
import { expandMarkers, mentionsMarker, resolvedValue, type LiteralRef } from "../core/literal-refs.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import type { SpilledPart } from "../core/archived-parts.js";
import type { AgentMessage } from "../core/session-types.js";
import { discardStagedSpills, stageSpillFiles } from "../io/write-spill.js";
import type { ArchivedFacts, ChainTask, ChainTaskResult, RecordsResult, SpillSettings, TaskTimings } from "./chain-task.js";
import { archiveRecords, type ArchivedRecords } from "./archive-records.js";
import { readFileSlice } from "./read-file-slice.js";
import type { BufferPool } from "../io/buffer-pool.js";
import { loadMsgpack } from "../io/msgpack-codec.js";
import { CLONE_MAX_DEPTH, jsonText, nestsDeeperThan } from "../core/json-text.js";

/** Runs the task; its span is read into `spanBuffers`, the thread's (workers/thread-scratch.ts), each given back when the task ends. */
export async function runChainTask(task: ChainTask, spanBuffers: BufferPool): Promise<ChainTaskResult> {
  injectFault(task);
  const hasher = await loadHasher();
  const held: Buffer[] = [];
  const room = (bytes: number) => {
    const buffer = spanBuffers.take(bytes);
    held.push(buffer);
    return buffer;
  };
  try {
    return await runWithRoom(task, hasher, room);
  } finally {
    // The refs into these bytes are gone with the task: the index bytes and the spill files were copied out.
    for (const buffer of held) spanBuffers.give(buffer);
  }
}

async function runWithRoom(task: ChainTask, hasher: Hasher, room: (bytes: number) => Buffer): Promise<ChainTaskResult> {
  const timings: TaskTimings = { decode: 0, extract: 0, hash: 0, spill: 0, body: 0 };
  let t = performance.now();
  const literals: LiteralRef[] = [];
  const inner = await sliceMessages(task, literals, hasher, room);
  t = lap(timings, "decode", t);
  const outputs = extractPlanned(task, inner);
  t = lap(timings, "extract", t);
  const archived = archiveRecords(outputs, literals, task.spill, hasher);
  t = lap(timings, "hash", t);
  // Written only: the main thread makes them durable before it appends the chain's index entry
  // (main/settle-spills.ts), while this thread goes on to its next chain; a task that fails removes them.
  const staged = stageSpillFiles(task.spill, archived.writes);
  t = lap(timings, "spill", t);
  let built: ReturnType<typeof buildResult>;
  try {
    built = buildResult(task, archived, literals);
  } catch (error) {
    discardStagedSpills(staged);
    throw error;
  }
  lap(timings, "body", t);
  return { ...built, staged, timings };
}

/** The task's result but its timings: the body, the index entry's bytes, and what the main thread needs of the records. */
function buildResult(task: ChainTask, archived: ArchivedRecords, literals: readonly LiteralRef[]) {
  const { records } = archived;
  const refs = refsOf(task, records);
  // The body quotes two records' args: only those are decoded, when they hold refs.
  const indexed = task.indexedRecords.map(({ argsJson, ...record }) => (argsJson === undefined ? record : { ...record, args: JSON.parse(argsJson) as unknown }));
  const body = task.indexOnly ? "" : buildDeterministicBody([...indexed, ...records], task.toolRefs, (args) => argsExcerpt(resolvedValue(args, literals)));
  const indexDataJson = indexDataBytesOf(
    records.map((record) => expandMarkers(jsonText(record), literals)),
    refs,
    task.indexRoom && Buffer.from(task.indexRoom),
  );
  const { spilledFiles, spilledBytes, archivedChars } = archived;
  const result = { body, indexDataJson, spilledFiles, spilledBytes, archivedChars };
  // On the file path the main thread makes the records itself, from its own messages (lightened,
  // or pi's whole ones) and these facts, and their refs from its plan; the index entry's bytes
  // above are the faithful copy of them.
  const { input } = task;
  if (input.kind !== "file-slice") return { ...result, kind: "records" as const, ...recordsPosted(records), refs };
  const lightener = input.mainMessages === "lightened" ? new Lightener() : undefined;
  return { ...result, kind: "facts" as const, archived: records.map((record, i) => archivedFacts(record, archived.soleText[i]!, literals, lightener)) };
}

/** Records as posted back: as they are, or as JSON text where a call's args or a part kept inline nest too deep to be cloned. */
function recordsPosted(records: ToolCallRecord[]): Pick<RecordsResult, "records" | "recordsJson"> {
  const tooDeep = (record: ToolCallRecord) => nestsDeeperThan(record.args, CLONE_MAX_DEPTH) || (record.parts !== undefined && nestsDeeperThan(record.parts, CLONE_MAX_DEPTH));
  if (!records.some(tooDeep)) return { records };
  return { records: [], recordsJson: records.map((record) => jsonText(record)) };
}

/** What a record adds to the main thread's output: lightened by the same rules as its messages (with a `lightener`), or whole. */
function archivedFacts(record: ToolCallRecord, soleText: boolean, literals: readonly LiteralRef[], lightener: Lightener | undefined): ArchivedFacts | undefined {
  const parts = partsFacts(record);
  if (record.spillPath !== undefined) {
    const spill: SpillFields = { spillBytes: record.spillBytes!, resultPreview: record.resultPreview!, spillPath: record.spillPath, contentHash: record.contentHash!, spillDigest: record.spillDigest! };
    lightener?.lighten(spill);
    return { spill, ...parts };
  }
  if (soleText) return parts.parts === undefined ? undefined : parts;
  const text = { resultText: record.resultText };
  lightener?.lighten(text);
  // Whole, a text joined from several parts is decoded (it may hold refs).
  return { resultText: lightener ? text.resultText : (resolvedValue(text.resultText, literals) as string | undefined), ...parts };
}

/** A record's parts as the main thread cannot make them: its content hash and spilled parts (no bulk: nothing to lighten). */
function partsFacts(record: ToolCallRecord): Pick<ArchivedFacts, "parts"> {
  if (record.parts === undefined) return {};
  return { parts: { contentHash: record.contentHash!, spilled: record.parts.filter((part): part is SpilledPart => part.kind === "spilled") } };
}

function refsOf(task: ChainTask, records: readonly ToolCallRecord[]) {
  return records.map((record, i) => buildRef(task.reservedRefs[i]!, record.toolCallId, record.resultTimestamp));
}

/** The span's messages, from wherever the task carries them. */
async function sliceMessages(task: ChainTask, literals: LiteralRef[], hasher: Hasher, room: (bytes: number) => Buffer): Promise<AgentMessage[]> {
  const { input } = task;
  switch (input.kind) {
    case "file-slice":
      // Spill paths (in the records, next to markers) name the blob folder: it must not mention one.
      return readFileSlice(input.slice, task.chainStart, literals, hasher, !mentionsMarker(Buffer.from(task.spill.blobDir)), room);
    case "messages":
      return input.messages;
    case "json":
      return input.texts.map((text) => JSON.parse(text) as AgentMessage);
    case "encoded": {
      const { unpackMultiple } = await loadMsgpack();
      return input.chunks.flatMap((chunk) => unpackMultiple(chunk) as AgentMessage[]);
    }
  }
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
  return found;
}

function injectFault(task: ChainTask): void {
  if (task.fault === "throw") throw new Error(`injected fault in chain ${task.chainStart}`);
  // In a worker thread process.exit ends only that thread: the pool sees a dead worker.
  if (task.fault === "exit") process.exit(70);
  // A worker that never answers: only its deadline (main/worker-pool.ts) ends it.
  if (task.fault === "hang") for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

export type { SpillSettings };
