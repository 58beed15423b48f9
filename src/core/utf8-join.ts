import { ByteSink } from "./byte-sink.js";

/**
 * UTF-8 bytes of several strings (and byte runs already encoded), concatenated in one pass.
 * `Buffer.from(parts.join(""))` builds the joined string first, and for multi-megabyte two-byte
 * strings V8 then re-reads it to size the buffer, a second pass that this avoids. The result is a
 * view of `room` when that is large enough (core/byte-sink.ts).
 */
export function utf8Join(parts: ReadonlyArray<string | Uint8Array>, room?: Buffer): Buffer {
  let chars = 0;
  for (const part of parts) chars += part.length;
  // Session text is mostly ASCII: one byte per character, plus room for some that take more.
  const sink = new ByteSink(chars + (chars >> 4) + 64, room);
  for (const part of parts) {
    if (typeof part === "string") sink.addText(part);
    else sink.addBytes(part);
  }
  return sink.bytes();
}
