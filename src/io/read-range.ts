/**
 * Positional reads of a session file: what a worker does to fetch its shard or its chain's lines
 * itself, so those bytes never pass through the main thread.
 */
import fs from "node:fs";

/** Ranges up to this size are read into one reused buffer per thread; larger ones get their own. */
const SCRATCH_MAX_BYTES = 16 * 1024 * 1024;
let scratch: Buffer = Buffer.alloc(0);

/**
 * Exactly `length` bytes at `offset`; a file shorter than that is an error (it shrank under us).
 * The result is valid until the next call on this thread: reusing one buffer spares V8 the
 * external-memory pressure (and full collections) that a fresh megabyte buffer per shard causes.
 */
export function readRange(fd: number, offset: number, length: number, file: string): Buffer {
  if (length <= SCRATCH_MAX_BYTES && scratch.length < length) scratch = Buffer.allocUnsafe(Math.min(SCRATCH_MAX_BYTES, Math.max(length, 2 * scratch.length)));
  return readInto(fd, length <= SCRATCH_MAX_BYTES ? scratch.subarray(0, length) : Buffer.allocUnsafe(length), offset, file);
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
