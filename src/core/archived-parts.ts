/**
 * An archived output's content parts other than text (images, and any kind chainpress does not
 * know), in the record field `parts` (a chainpress addition that pi-condense ignores). `resultText`
 * stays the text parts joined, so a text-only record is byte-identical to upstream's, and has no
 * `parts`. A part is kept verbatim: inline while its JSON is under the spill threshold, else its
 * JSON text is a spill file of its own, written, synced and verified like a text spill.
 * Pure: types and the facts every reader shares.
 */

import { isTextPart } from "./message-text.js";

/** A part kept in the record as the content held it. */
export interface InlinePart {
  /** Its index in the output's content array. */
  at: number;
  kind: "inline";
  part: unknown;
}

/** A part whose JSON text (`jsonText(part)`, UTF-8) is a spill file of its own. */
export interface SpilledPart {
  at: number;
  kind: "spilled";
  /** The part's `type` (`"image"`, …); `""` when it had none. */
  type: string;
  /** The part's `mimeType`, when it had a string one. */
  mimeType?: string;
  /** Length of the part's `data` string, when it had one (an image's base64 characters). */
  dataChars?: number;
  spillBytes: number;
  spillPath: string;
  /** `xxh64:<16 hex>` of the spill file's bytes. */
  spillDigest: string;
}

export type ArchivedPart = InlinePart | SpilledPart;

/** A non-text content part as found in a message: where it is and what it is. */
export interface FoundPart {
  at: number;
  part: unknown;
}

/** Every content part contentText does not read, in content order; none for string content. */
export function nonTextParts(content: unknown): FoundPart[] {
  if (!Array.isArray(content)) return [];
  const found: FoundPart[] = [];
  content.forEach((part: unknown, at) => {
    if (!isTextPart(part)) found.push({ at, part });
  });
  return found;
}

/** True when the content holds a part contentText does not read (an output with parts is never taken as its text alone). */
export function holdsNonTextParts(content: unknown): boolean {
  return Array.isArray(content) && content.some((part: unknown) => !isTextPart(part));
}

/**
 * An output's archived parts from its content and those of them that were spilled (the rest are
 * kept inline, as the content holds them): how a thread that has the message but not the spill
 * files makes the record's `parts`. Every spilled part must be one of the content's.
 */
export function mergeArchivedParts(content: unknown, spilled: readonly SpilledPart[]): ArchivedPart[] {
  const byAt = new Map(spilled.map((part) => [part.at, part]));
  const parts = nonTextParts(content).map(({ at, part }): ArchivedPart => byAt.get(at) ?? { at, kind: "inline", part });
  const used = parts.filter((part) => part.kind === "spilled").length;
  if (used !== spilled.length) throw new Error(`internal error: ${spilled.length - used} spilled parts are no part of the output's content`);
  return parts;
}

function field(part: unknown, key: string): unknown {
  return typeof part === "object" && part !== null && !Array.isArray(part) ? (part as Record<string, unknown>)[key] : undefined;
}

/** A part's `type`, `""` when it has none. */
export function partType(part: unknown): string {
  const type = field(part, "type");
  return typeof type === "string" ? type : "";
}

/** A part's string `mimeType`, if any. */
export function partMimeType(part: unknown): string | undefined {
  const mime = field(part, "mimeType");
  return typeof mime === "string" ? mime : undefined;
}

/** A part's string `data` (an image's base64), if any. */
export function partData(part: unknown): string | undefined {
  const data = field(part, "data");
  return typeof data === "string" ? data : undefined;
}

/** What an archived part is, whichever way it is kept. */
export interface PartFacts {
  type: string;
  mimeType: string | undefined;
  /** Characters of its `data` string; undefined when it has none. */
  dataChars: number | undefined;
}

export function partFacts(archived: ArchivedPart): PartFacts {
  if (archived.kind === "spilled") return { type: archived.type, mimeType: archived.mimeType, dataChars: archived.dataChars };
  return { type: partType(archived.part), mimeType: partMimeType(archived.part), dataChars: partData(archived.part)?.length };
}

/** True for an image part: pi's `{type: "image", data, mimeType}`. */
export function isImageFacts(facts: PartFacts): boolean {
  return facts.type === "image";
}

/** True when a record's parts hold at least one image. */
export function holdsImages(parts: readonly ArchivedPart[] | undefined): boolean {
  return parts !== undefined && parts.some((part) => isImageFacts(partFacts(part)));
}

/** The file extension `--parts` gives a part of this mime type. */
export function partFileExtension(mimeType: string | undefined): string {
  switch (mimeType) {
    case "image/png":
      return "png";
    case "image/jpeg":
      return "jpeg";
    case "image/gif":
      return "gif";
    case "image/webp":
      return "webp";
    default:
      return "bin";
  }
}

/** `--parts`'s file name for the `n`th non-text part (from 1, in content order) of output `ref`. */
export function partFileName(ref: string, n: number, mimeType: string | undefined): string {
  return `${ref}-${n}.${partFileExtension(mimeType)}`;
}

/** Decoded byte length of `chars` base64 characters (padding counted as in a canonical encoding). */
export function base64DecodedBytes(chars: number): number {
  return Math.floor((chars * 3) / 4);
}
