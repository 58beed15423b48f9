/**
 * The inline preview of a spilled output (reference §5): at most `maxBytes` UTF-8 bytes, never
 * splitting a character, and cut back to the last line break when the cut text has one.
 */

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
