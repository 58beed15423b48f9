/**
 * The inline preview of a spilled output (reference §5): at most `maxBytes` UTF-8 bytes, never
 * splitting a character, and cut back to the last line break when the cut text has one.
 * `headPreviewOfUtf8` gives the same preview from the text's UTF-8 bytes, decoding only the head.
 */

import { utf8Slice } from "./utf8-bytes.js";

export function headPreview(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  // Every UTF-16 unit encodes to at least one byte, so this prefix covers the first maxBytes bytes
  // without encoding a megabyte-sized output in full.
  const bytes = Buffer.from(text.slice(0, maxBytes + 1), "utf8");
  let end = maxBytes;
  // Step back over UTF-8 continuation bytes (10xxxxxx) so the cut lands on a character start.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  const cut = bytes.subarray(0, end).toString("utf8");
  const newline = cut.lastIndexOf("\n");
  return newline > 0 ? cut.slice(0, newline) : cut;
}

/**
 * `headPreview` of the text whose valid UTF-8 is `utf8`, decoding at most `maxBytes` bytes (a
 * non-negative integer): the same cut, made on the bytes, and the last line break looked for in
 * the bytes (a `\n` byte is always the character itself, and it is at byte 0 exactly when it is at
 * index 0). headPreview encodes a prefix of `maxBytes + 1` units, which may end in half a pair
 * (U+FFFD, 3 bytes); its lead and continuation bytes fall where the 4-byte character's first three
 * do, so the cut lands on the same character start.
 */
export function headPreviewOfUtf8(utf8: Uint8Array, maxBytes: number): string {
  if (utf8.length <= maxBytes) return utf8Slice(utf8, 0, utf8.length);
  let end = maxBytes;
  while (end > 0 && (utf8[end]! & 0xc0) === 0x80) end--;
  const newline = end > 0 ? utf8.lastIndexOf(0x0a, end - 1) : -1;
  return utf8Slice(utf8, 0, newline > 0 ? newline : end);
}
