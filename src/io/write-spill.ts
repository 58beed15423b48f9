/**
 * Spill files: an oversized output is written to `<blob dir>/<name>` through a temporary file,
 * fsync and a hard link to its final name (then the temporary name is removed), so a crash leaves
 * either no file or the complete one, never a torn body, and a file already there is never
 * replaced: one of the same bytes is kept (a rerun after a crash), another fails the chain.
 * The writing (`stageSpillFiles`, in the chain task) and the waiting for the disk
 * (`settleSpillFiles`, on the thread that commits, before the chain's index entry is appended)
 * are apart: a worker that waited for its fsyncs left its core idle. Permissions never exceed the
 * session file's.
 */

import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { threadId } from "node:worker_threads";
import { crashPoint } from "./crash-points.js";
import { openRegularForReadingAsync, refuseNonRegular } from "./regular-file.js";
import { asSpillWriteError, SpillWriteError } from "./spill-errors.js";
import { checkBlobDir, ensureBlobDir } from "./spill-folder.js";

export interface SpillTarget {
  /** Folder for this session's spill files. */
  blobDir: string;
  /** Mode of new spill files (the session file's read/write bits). */
  fileMode: number;
  /** Mode of a new blob folder. */
  dirMode: number;
}

/** Temporary spill files are `.tmp-<pid>-<thread>-<random>-<name>`: the pid lets a later run sweep a killed run's leftovers. */
const SPILL_TEMP_PREFIX = ".tmp-";

/** The writer's pid of a temporary spill file name; undefined for any other name. */
export function spillTempWriterPid(name: string): number | undefined {
  const match = /^\.tmp-(\d+)-\d+-[0-9a-f]{8}-/.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** The absolute path a spill file of this name gets; a name that would leave the folder is refused. */
export function spillPathFor(target: SpillTarget, fileName: string): string {
  const finalPath = path.resolve(target.blobDir, fileName);
  if (path.dirname(finalPath) !== path.resolve(target.blobDir)) {
    throw new Error(`spill file name escapes the blob folder: ${JSON.stringify(fileName)}`);
  }
  return finalPath;
}

export interface SpillWrite {
  fileName: string;
  bytes: Uint8Array;
}

/** A spill file written under its temporary name, not yet synced nor renamed. */
export interface StagedSpill {
  tempPath: string;
  finalPath: string;
}

/**
 * Writes each file under a temporary name in the blob folder (created if needed), without waiting
 * for the disk: the chain task's thread goes on to its next chain, and `settleSpillFiles` makes
 * them durable later. On a failure, none of them is left behind; it is thrown as a SpillWriteError.
 */
export function stageSpillFiles(target: SpillTarget, files: readonly SpillWrite[]): StagedSpill[] {
  if (files.length === 0) return [];
  const staged: StagedSpill[] = [];
  try {
    ensureBlobDir(target.blobDir, target.dirMode);
    for (const file of files) staged.push(stage(target, file));
  } catch (error) {
    discardStagedSpills(staged);
    throw asSpillWriteError(error);
  }
  return staged;
}

/**
 * Files synced at once (a chain can spill hundreds of outputs; the process has ~1024
 * descriptors). The fsyncs of a batch run concurrently on libuv's threads: one at a time, they
 * were most of a compaction's spill time, and the disk can overlap them.
 */
const BATCH_FILES = 64;

/**
 * Makes staged spill files durable under their final names: fsync each, place it (placeSpill),
 * then fsync the folder once, so a crash leaves either no file or the complete one, never a torn
 * body. The folder is checked again first (spill-folder.ts): it may have been replaced since the
 * files were staged. Every wait is asynchronous (libuv's threads): it runs on the thread that
 * commits, while the workers go on. On a failure, the files not yet placed are removed, and it is
 * thrown as a SpillWriteError.
 */
export async function settleSpillFiles(target: SpillTarget, staged: readonly StagedSpill[]): Promise<void> {
  if (staged.length === 0) return;
  let settled = 0;
  try {
    checkBlobDir(target.blobDir);
    for (; settled < staged.length; settled += BATCH_FILES) await settleBatch(staged.slice(settled, settled + BATCH_FILES));
    await fsyncPath(target.blobDir);
  } catch (error) {
    discardStagedSpills(staged.slice(settled));
    throw asSpillWriteError(error);
  }
}

async function settleBatch(batch: readonly StagedSpill[]): Promise<void> {
  await allDone(batch.map((item) => fsyncPath(item.tempPath)));
  // Asynchronous, and together: a link waits for the file system's journal, which other chains'
  // fsyncs keep busy (a synchronous call would hold the committing thread's event loop; one after
  // another, they were the slowest part of a settle).
  await allDone(batch.map((item) => placeSpill(item)));
}

/** Waits for every promise, then throws the first failure: what a failure then removes is no longer being placed. */
async function allDone(work: Array<Promise<void>>): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

/** Errors of `link(2)` on a file system without hard links (FAT, some network and FUSE ones). */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/**
 * Gives a synced temporary file its final name without replacing anything there: `link(2)` fails
 * with EEXIST on any existing name (a link included). A file already there is kept when it holds
 * the same bytes (a rerun after a crash that came after the placing) and refused otherwise: two
 * sessions with the same id in one folder share a blob folder and spill names. On a file system
 * without hard links, the name is checked free, then renamed to (a small window, as before).
 */
async function placeSpill(item: StagedSpill): Promise<void> {
  crashPoint("spill-written");
  refuseNonRegular(item.finalPath, "spill file");
  try {
    await fs.promises.link(item.tempPath, item.finalPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") await keepIdentical(item);
    else if (code !== undefined && NO_HARD_LINKS.has(code)) await renameIfFree(item);
    else throw error;
    crashPoint("spill-renamed");
    return;
  }
  await fs.promises.unlink(item.tempPath);
  crashPoint("spill-renamed");
}

async function renameIfFree(item: StagedSpill): Promise<void> {
  if (fs.lstatSync(item.finalPath, { throwIfNoEntry: false }) !== undefined) return keepIdentical(item);
  await fs.promises.rename(item.tempPath, item.finalPath);
}

/** The file at the final name holds the staged bytes: the staged copy goes; else the chain fails, and both stay as they are but the staged copy. */
async function keepIdentical(item: StagedSpill): Promise<void> {
  if (!(await sameBytes(item.finalPath, item.tempPath))) {
    throw new SpillWriteError(
      `spill file ${item.finalPath} already holds another output; chainpress leaves it as it is and does not compress this chain (probably a second session with the same id in this folder: give one of them another id)`,
      "spill-refused",
    );
  }
  await fs.promises.unlink(item.tempPath);
}

const COMPARE_CHUNK = 1024 * 1024;

/** True when two regular files (no final link followed) have the same length and bytes. */
async function sameBytes(existing: string, staged: string): Promise<boolean> {
  const a = await openRegularForReadingAsync(existing, "spill file");
  try {
    const b = await openRegularForReadingAsync(staged, "staged spill file");
    try {
      if (a.stat.size !== b.stat.size) return false;
      const left = Buffer.allocUnsafe(COMPARE_CHUNK);
      const right = Buffer.allocUnsafe(COMPARE_CHUNK);
      for (let at = 0; at < a.stat.size; at += COMPARE_CHUNK) {
        const length = Math.min(COMPARE_CHUNK, a.stat.size - at);
        const [x, y] = await Promise.all([a.handle.read(left, 0, length, at), b.handle.read(right, 0, length, at)]);
        if (x.bytesRead !== length || y.bytesRead !== length || !left.subarray(0, length).equals(right.subarray(0, length))) return false;
      }
      return true;
    } finally {
      await b.handle.close();
    }
  } finally {
    await a.handle.close();
  }
}

/** Removes staged files that will not be settled (their chain failed); a missing one is fine. */
export function discardStagedSpills(staged: readonly StagedSpill[]): void {
  for (const item of staged) fs.rmSync(item.tempPath, { force: true });
}

/** A temporary file holding the bytes, closed, not yet synced. */
function stage(target: SpillTarget, file: SpillWrite): StagedSpill {
  const finalPath = spillPathFor(target, file.fileName);
  const tempPath = path.join(target.blobDir, `${SPILL_TEMP_PREFIX}${process.pid}-${threadId}-${randomBytes(4).toString("hex")}-${file.fileName}`);
  const fd = fs.openSync(tempPath, "wx", target.fileMode);
  try {
    writeAll(fd, file.bytes);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(tempPath, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  return { tempPath, finalPath };
}

/** fsync of a file or folder by path: the data written through any descriptor becomes durable. */
async function fsyncPath(file: string): Promise<void> {
  const handle = await fs.promises.open(file, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Spill modes derived from the session file: same read/write bits, folders add search bits. */
export function spillModesFor(sessionFileMode: number): { fileMode: number; dirMode: number } {
  const fileMode = sessionFileMode & 0o666;
  const dirMode = fileMode | ((fileMode & 0o444) >> 2);
  return { fileMode, dirMode };
}
