/**
 * The one rule for every path chainpress reads or writes: only regular files. A device node, a
 * FIFO, a socket, a folder or a symbolic link where chainpress expects a file is refused before
 * anything is opened for writing, replaced or unlinked, and opening never blocks (a FIFO without
 * a writer would hang `open(2)`; a read of `/dev/zero` would never end).
 */

import fs from "node:fs";
import type { FileHandle } from "node:fs/promises";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** Something is at a path chainpress uses, and it is not a regular file. */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  constructor(
    readonly path: string,
    /** "a character device", "a FIFO", ... */
    readonly kind: string,
    /** What chainpress wanted the path for: "--out", "spill file", "session lock", ... */
    readonly role: string,
  ) {
    super(`${path}: ${role} is ${kind}, not a regular file; chainpress refuses it and leaves it as it is`);
  }
}

/** What a non-regular file is, in words. */
export function kindOf(stat: fs.Stats): string {
  if (stat.isFile()) return "a regular file";
  if (stat.isDirectory()) return "a directory";
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

/** lstat, or undefined when nothing is there. */
export function lstatOrNothing(target: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Throws NotRegularFileError when something other than a regular file is at `target` (a final
 * symbolic link counts as such: replacing it would replace the link, writing through it would
 * write elsewhere). Nothing there is fine: the caller creates the file.
 */
export function refuseNonRegular(target: string, role: string): void {
  const stat = lstatOrNothing(target);
  if (stat !== undefined && !stat.isFile()) throw new NotRegularFileError(target, kindOf(stat), role);
}

/**
 * Opens an existing file for reading without following a final link and without blocking, and
 * checks it is a regular file before anything is read. ENOENT and other open errors are thrown
 * as they are; a link (ELOOP under O_NOFOLLOW) or a non-regular file as NotRegularFileError.
 */
export function openRegularForReading(target: string, role: string): { fd: number; stat: fs.Stats } {
  let fd: number;
  try {
    fd = fs.openSync(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new NotRegularFileError(target, "a symbolic link", role);
    throw error;
  }
  const stat = fs.fstatSync(fd);
  if (!stat.isFile()) {
    fs.closeSync(fd);
    throw new NotRegularFileError(target, kindOf(stat), role);
  }
  return { fd, stat };
}

/** openRegularForReading for callers that must not block their thread on I/O (pi's, for one). */
export async function openRegularForReadingAsync(target: string, role: string): Promise<{ handle: FileHandle; stat: fs.Stats }> {
  let handle: FileHandle;
  try {
    handle = await fs.promises.open(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new NotRegularFileError(target, "a symbolic link", role);
    throw error;
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw new NotRegularFileError(target, kindOf(stat), role);
  }
  return { handle, stat };
}

/** readAtMost on a FileHandle. */
export async function readAtMostAsync(handle: FileHandle, limit: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(limit);
  let length = 0;
  while (length < limit) {
    const { bytesRead } = await handle.read(buffer, length, limit - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.subarray(0, length);
}

/**
 * Reads at most `limit` bytes from the start of an open file. Returns fewer when the file is
 * shorter; a caller that reads `expected + 1` learns that a file is too large without reading it.
 */
export function readAtMost(fd: number, limit: number): Buffer {
  const buffer = Buffer.allocUnsafe(limit);
  let length = 0;
  while (length < limit) {
    const got = fs.readSync(fd, buffer, length, limit - length, length);
    if (got === 0) break;
    length += got;
  }
  return buffer.subarray(0, length);
}

/** A small regular file's text (locks, markers), read without blocking and with a bound; undefined when absent. */
export function readSmallRegularFile(target: string, role: string, maxBytes = 64 * 1024): string | undefined {
  let opened: { fd: number; stat: fs.Stats };
  try {
    opened = openRegularForReading(target, role);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return readAtMost(opened.fd, maxBytes).toString("utf8");
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** Same file by identity (device and inode): a hard link or a symbolic link to it is the same file. */
export function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
