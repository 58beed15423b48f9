/**
 * A few large buffers a thread hands out and takes back, so that the megabytes a chain task reads
 * are the same megabytes each time. glibc raises its mmap threshold after the first large free, so
 * fresh megabyte buffers land in malloc's arenas, which keep them as fragments after they are
 * freed (bench/RESULTS.md). io/read-range.ts
 * keeps one scratch buffer for bytes that die before the next read; these stay valid until given
 * back, while a task's refs point into them.
 */

import { powerOfTwoAtLeast } from "../core/byte-sink.js";

export class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(
    /** Buffers kept for reuse (a thread rarely needs more at once). */
    private readonly keep: number,
    /** Larger requests get a buffer of their own that is not kept. */
    private readonly maxBytes: number,
  ) {}

  /** A buffer of at least `bytes` (its contents are whatever it held last); give it back when done. */
  take(bytes: number): Buffer {
    const index = this.free.findIndex((buffer) => buffer.length >= bytes);
    if (index >= 0) return this.free.splice(index, 1)[0]!;
    // Rounded up so that a slightly longer chain next time still fits.
    return Buffer.allocUnsafeSlow(bytes > this.maxBytes ? bytes : Math.min(this.maxBytes, powerOfTwoAtLeast(bytes, 64 * 1024)));
  }

  /** The largest buffer kept, if any: for a caller that cannot tell how much it will need. */
  takeLargest(): Buffer | undefined {
    if (this.free.length === 0) return undefined;
    let index = 0;
    for (let i = 1; i < this.free.length; i++) if (this.free[i]!.length > this.free[index]!.length) index = i;
    return this.free.splice(index, 1)[0];
  }

  /** Takes a buffer back; nothing may use it afterwards. */
  give(buffer: Buffer): void {
    if (buffer.length > this.maxBytes) return;
    this.free.push(buffer);
    // Keep the largest: a small one would only be replaced by the next large request.
    if (this.free.length > this.keep) {
      this.free.sort((a, b) => b.length - a.length);
      this.free.length = this.keep;
    }
  }
}
