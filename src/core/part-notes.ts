/**
 * What the model is told about an archived output's non-text parts without seeing them: how many
 * images, each one's mime type, decoded size and (where an inline part's header gives it) pixel
 * size, and how many other parts. One wording for the open-chain stub, search hits and listings.
 * Made from the record alone, so the same record always gives the same bytes. Pure.
 */

import { base64DecodedBytes, isImageFacts, partData, partFacts, type ArchivedPart } from "./archived-parts.js";
import { digitGroups } from "./digit-groups.js";
import { imageSize } from "./image-tokens.js";
import { realJsonLength } from "./light-placeholder.js";

/** One image part as a note describes it. */
export interface ImageNote {
  /** Its mime type, when it had a well-formed one. */
  mimeType?: string;
  /** Bytes its base64 data decodes to, from its length alone (up to 2 bytes of padding over), when it had data. */
  bytes?: number;
  /** Pixel size, from the header of an inline part's data (core/image-tokens.ts imageSize). */
  width?: number;
  height?: number;
}

/** An output's non-text parts, summed up. */
export interface PartsNote {
  images: ImageNote[];
  /** Non-text parts that are not images. */
  others: number;
}

/** Images a note describes one by one; the rest are counted. */
export const DESCRIBED_IMAGES = 3;

/** A mime type shown as it is; anything else (a hostile or garbled value) is not quoted at all. */
const MIME_TYPE = /^[A-Za-z0-9][A-Za-z0-9.+-]{0,40}\/[A-Za-z0-9][A-Za-z0-9.+-]{0,40}$/;

/** The note of a record's parts; undefined when it has none. */
export function partsNoteOf(parts: readonly ArchivedPart[] | undefined): PartsNote | undefined {
  if (parts === undefined || parts.length === 0) return undefined;
  const images: ImageNote[] = [];
  let others = 0;
  for (const part of parts) {
    const facts = partFacts(part);
    if (!isImageFacts(facts)) {
      others++;
      continue;
    }
    const note: ImageNote = {};
    if (facts.mimeType !== undefined && MIME_TYPE.test(facts.mimeType)) note.mimeType = facts.mimeType;
    const data = part.kind === "inline" ? partData(part.part) : undefined;
    // From the data's length alone, as for a spilled part: a lightened inline part (compact's
    // in-memory records, core/light-value.ts) then reads the same as the whole one.
    const chars = data !== undefined ? realJsonLength(data) - 2 : facts.dataChars;
    if (chars !== undefined) note.bytes = base64DecodedBytes(chars);
    const size = data === undefined ? undefined : imageSize(data);
    if (size !== undefined) Object.assign(note, size);
    images.push(note);
  }
  return { images, others };
}

/** `52 KB` (KB = 1,024 bytes; one decimal under 10 KB), `812 bytes` under 1 KB. */
export function kilobytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? "" : "s"}`;
  const kb = bytes / 1024;
  return kb < 10 ? `${kb.toFixed(1)} KB` : `${digitGroups(Math.round(kb))} KB`;
}

/** `image/png 1280×800 52 KB`: what is known of one image, in that order. */
export function imageNoteText(note: ImageNote): string {
  const words = [note.mimeType ?? "image"];
  if (note.width !== undefined && note.height !== undefined) words.push(`${note.width}\u00d7${note.height}`);
  if (note.bytes !== undefined) words.push(kilobytes(note.bytes));
  return words.join(" ");
}

/**
 * `1 image: image/png 1280×800 52 KB`, `4 images: …; …; …; 1 more`, with `and 2 other parts`
 * when there are; undefined when the note holds nothing.
 */
export function partsNoteText(note: PartsNote): string | undefined {
  const { images, others } = note;
  const said: string[] = [];
  if (images.length > 0) {
    const shown = images.slice(0, DESCRIBED_IMAGES).map(imageNoteText);
    if (images.length > DESCRIBED_IMAGES) shown.push(`${digitGroups(images.length - DESCRIBED_IMAGES)} more`);
    said.push(`${plural(images.length, "image")}: ${shown.join("; ")}`);
  }
  if (others > 0) said.push(`${plural(others, images.length > 0 ? "other part" : "non-text part")}`);
  return said.length === 0 ? undefined : said.join(" and ");
}

function plural(count: number, noun: string): string {
  return `${digitGroups(count)} ${noun}${count === 1 ? "" : "s"}`;
}
