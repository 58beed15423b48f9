/**
 * The records of a chain's planned outputs, with the spill files of the oversized ones. An output
 * that is a ref (the file path, core/literal-refs.ts) is sized, spilled and hashed from its
 * bytes; one given as a string (the live path, or text parts joined) from the string. The record
 * and the spill file are the same either way. An output's non-text parts (workers/archive-parts.ts)
 * join its record, their spill files the same writes, and its content hash covers them.
 */

import { buildBackfilledRecord, type PartsFields, type SpillFields } from "../core/chain-entry.js";
import { contentHashWithParts, textHash } from "../core/content-hash.js";
import type { Hasher } from "../core/digest.js";
import { unescapeLiteral } from "../core/unescape-literal.js";
import { outputFields, type SpanOutput } from "../core/extract-records.js";
import { soleText } from "../core/message-text.js";
import { refOf, refText, resolveMarkers, type LiteralRef } from "../core/literal-refs.js";
import { occurrenceKey } from "../core/occurrence-key.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { spillFileName } from "../core/spill-layout.js";
import { shouldSpill, spillsMeasured } from "../core/spill-rule.js";
import { spillPathFor, type SpillWrite } from "../io/write-spill.js";
import type { SpillSettings } from "./chain-task.js";
import { spillMaterial, spillMaterialOfUtf8, type SpillMaterial } from "./spill-material.js";
import { archiveParts } from "./archive-parts.js";
import { holdsNonTextParts } from "../core/archived-parts.js";

export interface ArchivedRecords {
  /** In planned order; spilled ones carry spill fields and an empty resultText. */
  records: ToolCallRecord[];
  /** Spill files to write (durably) before the index entry is appended. */
  writes: SpillWrite[];
  spilledFiles: number;
  spilledBytes: number;
  /** UTF-16 units of output archived (before spilling). */
  archivedChars: number;
  /** Per record: its text is its message's one text (not text parts joined). */
  soleText: boolean[];
}

export function archiveRecords(outputs: readonly SpanOutput[], literals: readonly LiteralRef[], spill: SpillSettings, hasher: Hasher): ArchivedRecords {
  const out: ArchivedRecords = { records: [], writes: [], spilledFiles: 0, spilledBytes: 0, archivedChars: 0, soleText: [] };
  for (const output of outputs) {
    const field = outputFields(output);
    const ref = refOf(field.resultText, literals);
    // Text parts joined around refs: rare, decoded whole.
    if (ref === undefined) field.resultText = resolveMarkers(field.resultText, literals);
    out.archivedChars += ref?.units ?? field.resultText.length;
    const material = spilled(field, ref, spill, hasher);
    const fields = material ? spillFields(field, material, spill, hasher, out) : undefined;
    const parts = partsFields(output, field, ref, material, literals, spill, hasher, out);
    out.records.push(buildBackfilledRecord(field, fields, parts));
    out.soleText.push(soleText(output.result.content) !== undefined);
  }
  out.spilledFiles = out.writes.length;
  return out;
}

type OutputFields = ReturnType<typeof outputFields>;

/** An output's non-text parts (their spill files join the writes) and the content hash covering text and parts; undefined without any. */
function partsFields(output: SpanOutput, field: OutputFields, ref: LiteralRef | undefined, material: SpillMaterial | undefined, literals: readonly LiteralRef[], spill: SpillSettings, hasher: Hasher, out: ArchivedRecords): PartsFields | undefined {
  // Most outputs are text alone: nothing to look up for them.
  if (!holdsNonTextParts(output.result.content)) return undefined;
  const key = occurrenceKey(field.toolCallId, field.resultTimestamp);
  const found = archiveParts(output.result.content, key, literals, spill, hasher, out.writes);
  if (found === undefined) return undefined;
  out.spilledBytes += found.spilledBytes;
  // The text's hash from the same string or bytes its spill file was made of.
  const text = material?.textHash ?? textHash(field.toolName, ref === undefined ? field.resultText : refText(ref));
  return { contentHash: contentHashWithParts(text, found.hashed), parts: found.parts };
}

/** The spill material of an output over the threshold, from its bytes when it is a ref. */
function spilled(field: OutputFields, ref: LiteralRef | undefined, spill: SpillSettings, hasher: Hasher): SpillMaterial | undefined {
  if (ref !== undefined) {
    if (!spillsMeasured(ref.units, !ref.loneSurrogate, spill.threshold)) return undefined;
    const lfAfterBlank: number[] = [];
    const bytes = unescapeLiteral(ref.bytes, ref.start, ref.end, lfAfterBlank);
    return spillMaterialOfUtf8(hasher, field.toolName, bytes, spill.previewBytes, lfAfterBlank);
  }
  return shouldSpill(field.resultText, spill.threshold) ? spillMaterial(hasher, field.toolName, field.resultText, spill.previewBytes) : undefined;
}

/** A spilled output's record fields; its file joins the writes. */
function spillFields(field: OutputFields, material: SpillMaterial, spill: SpillSettings, hasher: Hasher, out: ArchivedRecords): SpillFields {
  const fileName = spillFileName(hasher, occurrenceKey(field.toolCallId, field.resultTimestamp));
  out.writes.push({ fileName, bytes: material.bytes });
  out.spilledBytes += material.bytes.length;
  // A copy digested: the output's parts, if any, continue the text's hash.
  const contentHash = material.textHash.copy().digest("hex");
  return { spillBytes: material.bytes.length, resultPreview: material.resultPreview, spillPath: spillPathFor(spill, fileName), contentHash, spillDigest: material.spillDigest };
}
