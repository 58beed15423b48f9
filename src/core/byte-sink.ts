/**
 * A growable buffer that strings are appended to as UTF-8 and byte runs as they are. Short ASCII
 * strings are copied by hand (an encoder call costs more than the copy); longer ones go through
 * `TextEncoder.encodeInto`, which writes in place without an intermediate buffer.
 */

const encoder = new TextEncoder();

/** Below this length a string is copied by hand when it is ASCII. */
const SHORT_CHARS = 256;

export class ByteSink {
  private buffer: Buffer;
  private used = 0;

  /**
   * `room`, a buffer offered for reuse, is written into when it holds `initialBytes`; otherwise
   * the sink's own buffer is rounded up to a power of two, so that a slightly longer text next
   * time fits it once the caller offers it back.
   */
  constructor(initialBytes = 64 * 1024, room?: Buffer) {
    if (room && room.length >= initialBytes) this.buffer = room;
    else this.buffer = Buffer.allocUnsafeSlow(room ? powerOfTwoAtLeast(initialBytes) : Math.max(64, initialBytes));
  }

  get length(): number {
    return this.used;
  }

  /** Appends `text` as UTF-8; returns the bytes written. */
  addText(text: string): number {
    const start = this.used;
    if (text.length <= SHORT_CHARS && this.used + text.length <= this.buffer.length && this.putAscii(text)) return text.length;
    // Encode into the room there is; grow only when it ran out (encodeInto stops at a whole
    // character), to the worst case of what is left: three bytes per UTF-16 unit.
    for (let read = 0; ; ) {
      const done = encoder.encodeInto(read === 0 ? text : text.slice(read), this.buffer.subarray(this.used));
      read += done.read;
      this.used += done.written;
      if (read >= text.length) break;
      this.reserve((text.length - read) * 3);
    }
    return this.used - start;
  }

  /** Appends `text` one byte a character; every code unit must be below U+0100. Returns the bytes written. */
  addLatin1(text: string): number {
    this.reserve(text.length);
    this.used += this.buffer.write(text, this.used, "latin1");
    return text.length;
  }

  addBytes(bytes: Uint8Array): number {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
    return bytes.length;
  }

  /** What was appended: a view, valid until the next append. */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** The underlying buffer, for a caller that reuses it for the next sink. */
  release(): Buffer {
    return this.buffer;
  }

  private putAscii(text: string): boolean {
    const out = this.buffer;
    const at = this.used;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return false;
      out[at + i] = code;
    }
    this.used += text.length;
    return true;
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.used + bytes));
    this.buffer.copy(next, 0, 0, this.used);
    this.buffer = next;
  }
}

/** The smallest power of two at or above both `bytes` and `floor`: a buffer size that leaves room for a little more next time. */
export function powerOfTwoAtLeast(bytes: number, floor = 64): number {
  let size = floor;
  while (size < bytes) size *= 2;
  return size;
}
