/**
 * Spill files: an oversized output is written to `<blob dir>/<name>` through a temporary file,
 * fsync and rename, so a crash leaves either no file or the complete one, never a torn body.
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
import { refuseNonRegular } from "./regular-file.js";

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

/** Create the blob folder if needed (with the restricted mode). */
function ensureBlobDir(target: SpillTarget): void {
  fs.mkdirSync(target.blobDir, { recursive: true, mode: target.dirMode });
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
 * them durable later. On a failure, none of them is left behind.
 */
export function stageSpillFiles(target: SpillTarget, files: readonly SpillWrite[]): StagedSpill[] {
  if (files.length === 0) return [];
  ensureBlobDir(target);
  const staged: StagedSpill[] = [];
  try {
    for (const file of files) staged.push(stage(target, file));
  } catch (error) {
    discardStagedSpills(staged);
    throw error;
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
 * Makes staged spill files durable under their final names: fsync each, rename it, then fsync the
 * folder once, so a crash leaves either no file or the complete one, never a torn body. Every
 * wait is asynchronous (libuv's threads): it runs on the thread that commits, while the workers
 * go on. On a failure, the files not yet renamed are removed.
 */
export async function settleSpillFiles(target: SpillTarget, staged: readonly StagedSpill[]): Promise<void> {
  if (staged.length === 0) return;
  let settled = 0;
  try {
    for (; settled < staged.length; settled += BATCH_FILES) await settleBatch(staged.slice(settled, settled + BATCH_FILES));
    await fsyncPath(target.blobDir);
  } catch (error) {
    discardStagedSpills(staged.slice(settled));
    throw error;
  }
}

async function settleBatch(batch: readonly StagedSpill[]): Promise<void> {
  await allDone(batch.map((item) => fsyncPath(item.tempPath)));
  // Asynchronous, and together: a rename waits for the file system's journal, which other chains'
  // fsyncs keep busy (renameSync would hold the committing thread's event loop; one after
  // another, they were the slowest part of a settle).
  await allDone(batch.map((item) => renameSpill(item)));
}

/** Waits for every promise, then throws the first failure: what a failure then removes is no longer being renamed. */
async function allDone(work: Array<Promise<void>>): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

async function renameSpill(item: StagedSpill): Promise<void> {
  crashPoint("spill-written");
  refuseNonRegular(item.finalPath, "spill file");
  await fs.promises.rename(item.tempPath, item.finalPath);
  crashPoint("spill-renamed");
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
