/**
 * Spill files: an oversized output is written to `<blob dir>/<name>` through a temporary file,
 * fsync and rename, so a crash leaves either no file or the complete one, never a torn body.
 * Permissions never exceed the session file's.
 */

import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { threadId } from "node:worker_threads";
import { crashPoint } from "./crash-points.js";

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
export function ensureBlobDir(target: SpillTarget): void {
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

/**
 * Files open at once while a batch waits for its fsyncs (a chain can spill hundreds of outputs;
 * the process has ~1024 descriptors).
 */
const BATCH_FILES = 64;

/**
 * Writes spill files, each atomically (temporary file, fsync, rename), returning their paths in
 * order. The fsyncs of a batch run concurrently on libuv's threads: one at a time, they were most
 * of a 100 MB compaction's spill time (measured), and the disk can overlap them.
 */
export async function writeSpillFiles(target: SpillTarget, files: readonly SpillWrite[]): Promise<string[]> {
  const written: string[] = [];
  for (let at = 0; at < files.length; at += BATCH_FILES) {
    written.push(...(await writeBatch(target, files.slice(at, at + BATCH_FILES))));
  }
  return written;
}

interface Staged {
  fd: number;
  tempPath: string;
  finalPath: string;
}

async function writeBatch(target: SpillTarget, files: readonly SpillWrite[]): Promise<string[]> {
  const staged: Staged[] = [];
  try {
    for (const file of files) staged.push(stage(target, file));
    await Promise.all(staged.map((item) => fsyncAsync(item.fd)));
  } catch (error) {
    for (const item of staged) discard(item);
    throw error;
  }
  for (const item of staged) fs.closeSync(item.fd);
  let renamed = 0;
  try {
    for (const item of staged) {
      crashPoint("spill-written");
      fs.renameSync(item.tempPath, item.finalPath);
      renamed++;
      crashPoint("spill-renamed");
    }
  } catch (error) {
    for (const item of staged.slice(renamed)) fs.rmSync(item.tempPath, { force: true });
    throw error;
  }
  return staged.map((item) => item.finalPath);
}

/** A temporary file holding the bytes, not yet synced. */
function stage(target: SpillTarget, file: SpillWrite): Staged {
  const finalPath = spillPathFor(target, file.fileName);
  const tempPath = path.join(target.blobDir, `${SPILL_TEMP_PREFIX}${process.pid}-${threadId}-${randomBytes(4).toString("hex")}-${file.fileName}`);
  const fd = fs.openSync(tempPath, "wx", target.fileMode);
  const item = { fd, tempPath, finalPath };
  try {
    writeAll(fd, file.bytes);
  } catch (error) {
    discard(item);
    throw error;
  }
  return item;
}

function discard(item: Staged): void {
  try {
    fs.closeSync(item.fd);
  } catch {
    // Already closed (a failure after the fsyncs): the removal below is what matters.
  }
  fs.rmSync(item.tempPath, { force: true });
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Make the renames durable: fsync the folder once after a batch of spills. */
export function syncBlobDir(target: SpillTarget): void {
  const fd = fs.openSync(target.blobDir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Spill modes derived from the session file: same read/write bits, folders add search bits. */
export function spillModesFor(sessionFileMode: number): { fileMode: number; dirMode: number } {
  const fileMode = sessionFileMode & 0o666;
  const dirMode = fileMode | ((fileMode & 0o444) >> 2);
  return { fileMode, dirMode };
}
