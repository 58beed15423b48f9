/**
 * A `context-prune-index` line as a copy of the session in another folder must hold it: each
 * valid record's `spillPath`, and each of its spilled parts' (core/archived-parts.ts), names the
 * file of the same name in the copy's own blob folder. Only those string literals change; every
 * other byte of the line stays as it was.
 */

import path from "node:path";
import { CUSTOM_TYPE_INDEX } from "./custom-types.js";
import { isObject, recordProblem } from "./entry-shapes.js";
import { isPlainSpillFileName, replaceSpans, spillPathSpans, type SpillPathSpan } from "./spill-path-spans.js";

/** A spill file a copied record names, with what its record says the file holds. */
export interface NamedSpill {
  /** The entry's `id` (or "?"), for messages. */
  entryId: string;
  toolCallId: string;
  toolName: string;
  /** The record's `spillPath` as stored. */
  stored: string;
  /** Its file name, already checked to be a plain name. */
  fileName: string;
  spillBytes?: number;
  spillDigest?: string;
  /** The record's text hash; never for a part's file, nor for a record with parts (its hash covers them too). */
  contentHash?: string;
}

export type RelocatedLine =
  | { ok: true; bytes: Uint8Array; spills: NamedSpill[] }
  /** A record whose path has no usable file name; `spill` names it. */
  | { ok: false; spill: Omit<NamedSpill, "fileName">; problem: string };

/** Cheap test before parsing: only lines holding both words can hold a spilled record. */
export function mayNameSpillFiles(line: Uint8Array): boolean {
  const bytes = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
  return bytes.includes("spillPath") && bytes.includes(CUSTOM_TYPE_INDEX);
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/**
 * The line with its records' spill paths pointing into `blobDir`, or undefined when it is not a
 * readable index entry (it is then copied as it is: readers skip it too). Records that readers
 * skip keep their bytes.
 */
export function relocateIndexLine(line: Uint8Array, blobDir: string): RelocatedLine | undefined {
  const entry = parsed(line);
  if (!isObject(entry) || entry.type !== "custom" || entry.customType !== CUSTOM_TYPE_INDEX) return undefined;
  const data = entry.data;
  if (!isObject(data) || !Array.isArray(data.toolCalls)) return undefined;
  const entryId = typeof entry.id === "string" ? entry.id : "?";
  const spills: NamedSpill[] = [];
  const replacements: Array<{ span: SpillPathSpan; literal: Uint8Array }> = [];
  for (const span of spillPathSpans(line)) {
    const raw: unknown = data.toolCalls[span.record];
    if (recordProblem(raw) !== undefined) continue;
    const record = raw as Record<string, unknown>;
    const holder = span.part === undefined ? record : Array.isArray(record.parts) ? (record.parts[span.part] as unknown) : undefined;
    // A literal JSON.parse did not keep (a duplicate key) is left as it is, as is a part kept inline.
    if (!isObject(holder) || (span.part !== undefined && holder.kind !== "spilled")) continue;
    if (typeof holder.spillPath !== "string" || literalValue(line, span) !== holder.spillPath) continue;
    const spill = namedSpill(entryId, record, holder);
    if (!isPlainSpillFileName(spill.fileName)) return { ok: false, spill, problem: `spillPath ${JSON.stringify(spill.stored)} names no plain file name` };
    spills.push(spill);
    replacements.push({ span, literal: encoder.encode(JSON.stringify(path.join(blobDir, spill.fileName))) });
  }
  return { ok: true, bytes: replacements.length === 0 ? line : replaceSpans(line, replacements), spills };
}

function parsed(line: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(line));
  } catch {
    // Not a line any reader takes as an entry (malformed, glued, not UTF-8): copied as it is.
    return undefined;
  }
}

function literalValue(line: Uint8Array, span: SpillPathSpan): unknown {
  return JSON.parse(decoder.decode(line.subarray(span.start, span.end)));
}

/** The spill file `holder` (the record, or one of its spilled parts) names, with what its record says it holds. */
function namedSpill(entryId: string, record: Record<string, unknown>, holder: Record<string, unknown>): NamedSpill {
  const stored = holder.spillPath as string;
  const spill: NamedSpill = { entryId, toolCallId: record.toolCallId as string, toolName: record.toolName as string, stored, fileName: path.basename(stored) };
  if (typeof holder.spillBytes === "number") spill.spillBytes = holder.spillBytes;
  if (typeof holder.spillDigest === "string") spill.spillDigest = holder.spillDigest;
  // A hash of the text alone only: a record with parts hashes them too, and a part's file is no text.
  if (holder === record && record.parts === undefined && typeof record.contentHash === "string") spill.contentHash = record.contentHash;
  return spill;
}
