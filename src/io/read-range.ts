/**
 * Positional reads of a session file: what a worker does to fetch its shard or its chain's lines
 * itself, so those bytes never pass through the main thread.
 */
import fs from "node:fs";

/** Exactly `length` bytes at `offset`; a file shorter than that is an error (it shrank under us). */
export function readRange(fd: number, offset: number, length: number, file: string): Buffer {
  const buffer = Buffer.allocUnsafe(length);
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
