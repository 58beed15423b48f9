/**
 * A chain task's records from the scan's spool (io/spool.ts) instead of the session's lines: each
 * record is serialised with its output text spliced in as the JSON the scan already wrote, and a
 * spilled output's file is written from the bytes the scan already encoded and hashed. Same
 * records, same bytes as the file-slice path (test/compress-determinism.test.ts holds them equal).
 */

import { buildBackfilledRecord } from "../core/chain-entry.js";
import { contentHash } from "../core/content-hash.js";
import type { Hasher } from "../core/digest.js";
import { lightenInPlace } from "../core/light-value.js";
import { occurrenceKey } from "../core/occurrence-key.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { spillFileName } from "../core/spill-layout.js";
import { readSpooled } from "../io/spool.js";
import { ensureBlobDir, spillPathFor, writeSpillFiles, type SpillWrite } from "../io/write-spill.js";
import type { ChainTask, SpoolSlice, SpooledOutput } from "./chain-task.js";

export interface SpooledRecords {
  /** Lightened records (what the main thread keeps). */
  records: ToolCallRecord[];
  /** Each record's exact JSON, as parts to concatenate. */
  recordJson: Array<Array<string | Uint8Array>>;
  /** The records as the deterministic body reads them (real args). */
  bodyRecords: ToolCallRecord[];
  spilledFiles: number;
  spilledBytes: number;
  archivedChars: number;
}

export async function spooledRecords(task: ChainTask, slice: SpoolSlice, hasher: Hasher): Promise<SpooledRecords> {
  checkPlanned(task, slice);
  const writes: SpillWrite[] = [];
  const bytes = readSpooled(slice.dir, slice.outputs.flatMap((output) => [output.args, output.bulk]));
  const out: SpooledRecords = { records: [], recordJson: [], bodyRecords: [], spilledFiles: 0, spilledBytes: 0, archivedChars: 0 };
  slice.outputs.forEach((output, i) => {
    const argsText = bytes[2 * i]!.toString("utf8");
    const args = JSON.parse(argsText) as unknown;
    const bulk = bytes[2 * i + 1]!;
    out.archivedChars += output.chars;
    const record = output.spill ? spilledRecord(task, output, args, bulk, hasher, writes) : inlineRecord(output, args);
    out.bodyRecords.push(record);
    out.recordJson.push(output.spill ? [JSON.stringify(record)] : withText(JSON.stringify(record), bulk));
    if (output.spill) {
      out.spilledFiles++;
      out.spilledBytes += bulk.length;
    }
    // Lightened as the file-slice path lightens a full record, on args of its own (lightening
    // works in place, and the body still reads the real ones); the text's light form is spooled.
    const light = { ...record, args: JSON.parse(argsText) as unknown };
    lightenInPlace(light);
    if (!output.spill) light.resultText = output.lightText ?? "";
    out.records.push(light);
  });
  if (writes.length > 0) {
    ensureBlobDir(task.spill);
    await writeSpillFiles(task.spill, writes);
  }
  return out;
}

/** The plan's keys, in order, or the main thread and the spool disagree: fail closed. */
function checkPlanned(task: ChainTask, slice: SpoolSlice): void {
  const keys = slice.outputs.map((output) => occurrenceKey(output.toolCallId, output.resultTimestamp));
  if (keys.length !== task.plannedKeys.length || keys.some((key, i) => key !== task.plannedKeys[i])) {
    throw new Error(`chain ${task.chainStart}: spooled outputs differ from the plan`);
  }
  for (const output of slice.outputs) {
    if (output.spill !== undefined && output.chars < task.spill.threshold) {
      throw new Error(`chain ${task.chainStart}: output ${output.toolCallId} was spooled for a different spill threshold`);
    }
  }
}

/** The record with an empty `resultText`, whose JSON `withText` completes. */
function inlineRecord(output: SpooledOutput, args: unknown): ToolCallRecord {
  return buildBackfilledRecord({ ...fieldsOf(output, args), resultText: "" });
}

/** The record of a spilled output; its file joins `writes`, written (durably) before the task ends. */
function spilledRecord(task: ChainTask, output: SpooledOutput, args: unknown, bytes: Buffer, hasher: Hasher, writes: SpillWrite[]): ToolCallRecord {
  const spill = output.spill!;
  // The scan hashed with the result's own tool name; a call that names another tool is hashed anew.
  const hash = spill.hashedToolName === output.toolName ? spill.contentHash : contentHash(output.toolName, bytes.toString("utf8"));
  const fileName = spillFileName(hasher, occurrenceKey(output.toolCallId, output.resultTimestamp));
  const spillPath = spillPathFor(task.spill, fileName);
  writes.push({ fileName, bytes });
  const fields = { spillBytes: bytes.length, resultPreview: spill.resultPreview, spillPath, contentHash: hash, spillDigest: spill.spillDigest };
  return buildBackfilledRecord({ ...fieldsOf(output, args), resultText: "" }, fields);
}

function fieldsOf(output: SpooledOutput, args: unknown) {
  return { toolCallId: output.toolCallId, toolName: output.toolName, args, isError: output.isError, resultTimestamp: output.resultTimestamp };
}

/**
 * The record's JSON with the spooled text where `"resultText":""` is. Only numbers and booleans
 * follow `resultText` in a record, so its last occurrence is the record's own key.
 */
function withText(json: string, textJson: Uint8Array): Array<string | Uint8Array> {
  const at = json.lastIndexOf(EMPTY_TEXT);
  if (at === -1) throw new Error("internal error: record without resultText");
  const cut = at + EMPTY_TEXT.length - 2;
  return [json.slice(0, cut), textJson, json.slice(cut + 2)];
}

const EMPTY_TEXT = '"resultText":""';
