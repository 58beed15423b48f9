/** Small facts about UTF-8 bytes that the byte-level readers (literals, hashes, previews) share. Pure. */

/** Bytes of the UTF-8 character whose lead byte is `lead`. */
export function utf8CharBytes(lead: number): number {
  return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

/** `bytes[start, end)` as a string (a view over the same memory, no copy). */
export function utf8Slice(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString("utf8");
}
