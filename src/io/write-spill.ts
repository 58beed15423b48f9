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

/** Write one spill file atomically; returns its absolute path. */
export function writeSpillFile(target: SpillTarget, fileName: string, bytes: Uint8Array): string {
  const finalPath = path.resolve(target.blobDir, fileName);
  if (path.dirname(finalPath) !== path.resolve(target.blobDir)) {
    throw new Error(`spill file name escapes the blob folder: ${JSON.stringify(fileName)}`);
  }
  const tempPath = path.join(target.blobDir, `${SPILL_TEMP_PREFIX}${process.pid}-${threadId}-${randomBytes(4).toString("hex")}-${fileName}`);
  const fd = fs.openSync(tempPath, "wx", target.fileMode);
  try {
    writeAll(fd, bytes);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(tempPath, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  crashPoint("spill-written");
  fs.renameSync(tempPath, finalPath);
  crashPoint("spill-renamed");
  return finalPath;
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
