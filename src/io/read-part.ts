/**
 * An archived output's non-text content part, read back (core/archived-parts.ts): an inline part
 * is the record's own; a spilled part's file is looked up, confined and verified exactly as a text
 * spill file is (io/read-spill.ts `readSpillBytes`), then parsed: its bytes are the part's JSON
 * text, so the part comes back as the content held it (an image's base64 byte for byte). A
 * missing, refused or damaged file is a failure value saying why; the output's text never
 * depends on its parts.
 */

import { partFacts, type ArchivedPart, type PartFacts, type SpilledPart } from "../core/archived-parts.js";
import type { Hasher } from "../core/digest.js";
import type { ToolCallRecord } from "../core/prune-types.js";
import { decodeSpill, readSpillBytes, recordName, type SpillFailure, type SpillRef } from "./read-spill.js";

export type PartReadResult = { ok: true; part: unknown } | SpillFailure;

/** How a refusal names a part: its record and its index in the output's content. */
export function partName(record: Pick<ToolCallRecord, "toolCallId" | "resultTimestamp">, archived: Pick<ArchivedPart, "at">): string {
  return `${recordName(record)} part ${archived.at}`;
}

/** The part itself: the record's inline copy, or its verified spill file parsed. */
export async function readArchivedPart(record: ToolCallRecord, archived: ArchivedPart, hasher: Hasher, blobDir: string | undefined): Promise<PartReadResult> {
  if (archived.kind === "inline") return { ok: true, part: archived.part };
  const ref: SpillRef = { name: partName(record, archived), spillPath: archived.spillPath, spillBytes: archived.spillBytes, spillDigest: archived.spillDigest };
  const read = await readSpillBytes(ref, hasher, blobDir);
  if (!read.ok) return read;
  const decoded = decodeSpill(read.bytes, read.file);
  if (!decoded.ok) return decoded;
  let part: unknown;
  try {
    part = JSON.parse(decoded.text);
  } catch (error) {
    return { ok: false, reason: "corrupt", detail: `spill file ${read.file} is not a part's JSON text (${error instanceof Error ? error.message : String(error)})` };
  }
  const mismatch = factsMismatch(archived, partFacts({ at: archived.at, kind: "inline", part }));
  return mismatch === undefined ? { ok: true, part } : { ok: false, reason: "corrupt", detail: `spill file ${read.file} holds ${mismatch}` };
}

/**
 * What the file's part says that its record does not, if anything: a file of the right digest
 * under a record whose facts were edited by hand is not shown as what the record describes.
 */
function factsMismatch(archived: SpilledPart, found: PartFacts): string | undefined {
  if (found.type !== archived.type) return `a part of type ${JSON.stringify(found.type)}, its record says ${JSON.stringify(archived.type)}`;
  if (found.mimeType !== archived.mimeType) return `a part of mime type ${JSON.stringify(found.mimeType ?? null)}, its record says ${JSON.stringify(archived.mimeType ?? null)}`;
  if (found.dataChars !== archived.dataChars) return `a part with ${found.dataChars ?? "no"} data characters, its record says ${archived.dataChars ?? "none"}`;
  return undefined;
}
