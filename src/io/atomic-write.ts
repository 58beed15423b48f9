/**
 * Replaces a file atomically: content goes to a temp file in the same folder, is fsynced,
 * then renamed over the target and the folder is fsynced. A crash leaves either the old file
 * or the new one, never a mix; a failed write leaves the old file untouched and no temp file.
 * Content is written chunk by chunk, so callers can stream large files.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { crashPoint } from "./crash-points.js";
import { refuseNonRegular } from "./regular-file.js";

/** Temporary copies are `.<name>.chainpress-tmp-<pid>-<random>`: the pid lets a later run sweep a killed run's leftovers. */
const ATOMIC_TEMP_MARK = ".chainpress-tmp-";

/** The writer's pid of a temporary copy of `target` (a file name in the same folder); undefined for any other name. */
export function atomicTempWriterPid(name: string, target: string): number | undefined {
  const prefix = `.${basename(target)}${ATOMIC_TEMP_MARK}`;
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)-[0-9a-f]{8}$/.exec(name.slice(prefix.length));
  return match ? Number(match[1]) : undefined;
}

export interface AtomicWriteOptions {
  /** Permission bits of the new file (default 0o644); applied with chmod, so umask does not apply. */
  mode?: number;
  /** Owner to give the new file (e.g. to keep a user's file theirs when running as root). */
  owner?: { uid: number; gid: number };
  /** What the file is, for the refusal when something other than a regular file is in its place. */
  role?: string;
}

/** Small chunks are batched into writes of about this size. */
const BATCH_BYTES = 1024 * 1024;

/** Writes `chunks` to `path` atomically; refuses (NotRegularFileError) to replace anything but a regular file. */
export async function writeFileAtomic(
  path: string,
  chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const role = options.role ?? "the file to replace";
  refuseNonRegular(path, role);
  const tempPath = join(dirname(path), `.${basename(path)}${ATOMIC_TEMP_MARK}${process.pid}-${randomBytes(4).toString("hex")}`);
  const handle = await open(tempPath, "wx", 0o600);
  try {
    await writeBatched(handle, chunks);
    await handle.chmod(options.mode ?? 0o644);
    if (options.owner !== undefined) await handle.chown(options.owner.uid, options.owner.gid);
    await handle.sync();
    await handle.close();
    crashPoint("atomic-temp-written"); // test-only (crash-points.ts)
    // Again, right before the rename: the write may have taken a while.
    refuseNonRegular(path, role);
    await rename(tempPath, path);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(tempPath).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(path));
}

async function writeBatched(
  handle: FileHandle,
  chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
): Promise<void> {
  let batch: Uint8Array[] = [];
  let batchLength = 0;
  for await (const chunk of chunks) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    batch.push(bytes);
    batchLength += bytes.length;
    if (batchLength >= BATCH_BYTES) {
      await writeFully(handle, Buffer.concat(batch, batchLength));
      batch = [];
      batchLength = 0;
    }
  }
  if (batchLength > 0) await writeFully(handle, Buffer.concat(batch, batchLength));
}

/** write(2) may write less than asked; keep going until every byte is out. */
export async function writeFully(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    if (bytesWritten === 0) throw new Error("write(2) made no progress");
    offset += bytesWritten;
  }
}

/** Writes every part, in order, with as few writev(2) calls as the kernel allows (one, normally). */
export async function writeFullyV(handle: FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  for (let rest = nonEmpty(parts); rest.length > 0; ) rest = unwritten(rest, (await handle.writev(rest)).bytesWritten);
}

/** writeFullyV on the calling thread, for lines short enough that a thread-pool round trip costs more than the write. */
export function writeFullyVSync(fd: number, parts: readonly Uint8Array[]): void {
  for (let rest = nonEmpty(parts); rest.length > 0; ) rest = unwritten(rest, fs.writevSync(fd, rest));
}

function nonEmpty(parts: readonly Uint8Array[]): Uint8Array[] {
  return parts.filter((part) => part.length > 0);
}

/** What is left of `parts` after a writev(2) wrote `bytesWritten`: whole parts first, then the front of a partly written one. */
function unwritten(parts: Uint8Array[], bytesWritten: number): Uint8Array[] {
  if (bytesWritten === 0) throw new Error("writev(2) made no progress");
  let rest = parts;
  let left = bytesWritten;
  while (rest.length > 0 && left >= rest[0]!.length) {
    left -= rest[0]!.length;
    rest = rest.slice(1);
  }
  return left > 0 ? [rest[0]!.subarray(left), ...rest.slice(1)] : rest;
}

/** Makes the rename durable. Some platforms cannot fsync a folder; that is not an error there. */
async function syncDirectory(folder: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(folder, "r");
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM") throw error;
  } finally {
    await handle?.close();
  }
}
