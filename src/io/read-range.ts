/**
 * Positional reads of a session file: what a worker does to fetch its shard or its chain's lines
 * itself, so those bytes never pass through the main thread.
 */
import fs from "node:fs";

/** Ranges up to this size are read into a RangeReader's one reused buffer; larger ones get their own. */
const SCRATCH_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Reads ranges into one buffer it reuses: a fresh megabyte buffer per shard puts V8 under
 * external-memory pressure (and full collections). Kept by whoever reads range after range on one
 * thread (a pool thread, an inline runner, a migration), for as long as that goes on.
 */
export class RangeReader {
  private scratch: Buffer = Buffer.alloc(0);

  /**
   * Exactly `length` bytes at `offset`; a file shorter than that is an error (it shrank under us).
   * The result is valid until this reader's next read.
   */
  read(fd: number, offset: number, length: number, file: string): Buffer {
    if (length <= SCRATCH_MAX_BYTES && this.scratch.length < length) this.scratch = Buffer.allocUnsafe(Math.min(SCRATCH_MAX_BYTES, Math.max(length, 2 * this.scratch.length)));
    return readInto(fd, length <= SCRATCH_MAX_BYTES ? this.scratch.subarray(0, length) : Buffer.allocUnsafe(length), offset, file);
  }
}

/** Fills `buffer` from `offset`; a file that ends first is an error (it shrank under us). */
export function readInto(fd: number, buffer: Buffer, offset: number, file: string): Buffer {
  const length = buffer.length;
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buffer, done, length - done, offset + done);
    if (n === 0) throw new Error(`${file}: file ended at byte ${offset + done}, expected ${offset + length}`);
    done += n;
  }
  return buffer;
}

/** Opens `file` read-only for the duration of `use`. */
export function withReadFd<T>(file: string, use: (fd: number) => T): T {
  const fd = fs.openSync(file, "r");
  try {
    return use(fd);
  } finally {
    fs.closeSync(fd);
  }
}
